import { throwIfAborted } from "@stowage/core";
import { sql } from "drizzle-orm";
import { resolveSchema } from "./connect-options.js";
import { rowsOf, type StowageDatabase } from "./database.js";
import { EMBEDDED_MIGRATIONS } from "./migrations.generated.js";
import { runDatabase } from "./run-database.js";

/**
 * The table, in Stowage's schema, where Stowage records the migrations it applied: its own, so
 * that a host's drizzle `migrate()` (which keeps `drizzle.__drizzle_migrations`) and Stowage's
 * never skip each other's. Same columns as drizzle's (`id`, `hash`, `created_at`).
 */
const STOWAGE_MIGRATIONS_TABLE = "stowage_migrations";
/** Transaction-level advisory lock key held while migrating, so that concurrent processes migrate one at a time. */
const MIGRATION_LOCK_KEY = 0x5354_4f57; // "STOW"

/** Options of {@link migrateStowage}. */
export interface MigrateStowageOptions {
  /** Any drizzle PostgreSQL database (node-postgres pool or client, PGlite). */
  db: StowageDatabase;
  /** The schema for Stowage's tables, created if missing. Default `public`. */
  schema?: string;
  signal?: AbortSignal;
}

/** Where earlier versions recorded Stowage's migrations: drizzle's default for `public`, else in the schema. */
const legacyTable = (schema: string) =>
  schema === "public" ? `"drizzle"."__drizzle_migrations"` : `"${schema}"."__drizzle_migrations"`;

/**
 * Applies Stowage's migrations (those of `STOWAGE_MIGRATIONS_FOLDER`, embedded in the package's
 * JavaScript so that a bundled application needs no folder on disk) in one transaction under an advisory
 * lock, recording them in `<schema>.stowage_migrations`. A migration is applied when its journal
 * time is not recorded yet, whatever else is, so none is ever skipped.
 *
 * A database migrated by an earlier version, which recorded Stowage's migrations in drizzle's
 * table, is adopted: the rows whose hash is one of Stowage's migrations move to Stowage's table
 * (nothing is run again), and drizzle's table keeps only the host's own rows. `connectPostgres`
 * and `connectEmbedded` call this; a host with its own drizzle database calls it once at start.
 */
export async function migrateStowage(options: MigrateStowageOptions): Promise<void> {
  const { db, signal } = options;
  const schema = resolveSchema(options.schema);
  const migrations = EMBEDDED_MIGRATIONS;
  const table = `"${schema}"."${STOWAGE_MIGRATIONS_TABLE}"`;
  await runDatabase("apply Stowage's migrations", signal, () =>
    db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
      // Only when missing: CREATE SCHEMA, even IF NOT EXISTS, needs CREATE on the database.
      if (!(await exists(tx, "to_regnamespace", `"${schema}"`))) {
        await tx.execute(sql.raw(`CREATE SCHEMA "${schema}"`));
      }
      // The migrations name their tables unqualified: they land in Stowage's schema.
      await tx.execute(sql.raw(`SET LOCAL search_path TO "${schema}"`));
      const existed = await exists(tx, "to_regclass", table);
      await tx.execute(
        sql.raw(
          `CREATE TABLE IF NOT EXISTS ${table} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
        ),
      );
      if (!existed) await adoptLegacyRecords(tx, schema, table, migrations);
      const applied = new Set(
        rowsOf(await tx.execute(sql.raw(`SELECT created_at FROM ${table}`))).map((row) =>
          Number(row.created_at),
        ),
      );
      for (const migration of migrations) {
        if (applied.has(migration.folderMillis)) continue;
        throwIfAborted(signal, "apply Stowage's migrations");
        for (const statement of migration.sql) {
          if (statement.trim() !== "") await tx.execute(sql.raw(statement));
        }
        await tx.execute(
          sql`INSERT INTO ${sql.raw(table)} (hash, created_at) VALUES (${migration.hash}, ${migration.folderMillis})`,
        );
      }
    }),
  );
}

/** Whether a schema (`to_regnamespace`) or table (`to_regclass`) of that quoted name exists. */
async function exists(
  tx: Pick<StowageDatabase, "execute">,
  lookup: "to_regnamespace" | "to_regclass",
  name: string,
): Promise<boolean> {
  return Boolean(
    rowsOf(await tx.execute(sql`SELECT ${sql.raw(lookup)}(${name}) IS NOT NULL AS found`))[0]?.found,
  );
}

/** Moves the records of Stowage's own migrations out of drizzle's table into Stowage's. */
async function adoptLegacyRecords(
  tx: Pick<StowageDatabase, "execute">,
  schema: string,
  table: string,
  migrations: readonly { hash: string }[],
): Promise<void> {
  const legacy = legacyTable(schema);
  if (!(await exists(tx, "to_regclass", legacy))) return;
  const hashes = JSON.stringify(migrations.map((migration) => migration.hash));
  await tx.execute(sql`
    WITH ours AS (
      DELETE FROM ${sql.raw(legacy)}
      WHERE hash IN (SELECT jsonb_array_elements_text(${hashes}::jsonb))
      RETURNING hash, created_at
    )
    INSERT INTO ${sql.raw(table)} (hash, created_at) SELECT hash, created_at FROM ours ORDER BY created_at`);
}
