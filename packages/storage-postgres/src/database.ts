import { fileURLToPath } from "node:url";
import { describeValue, StowageError } from "@stowage/core";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";

/**
 * Any drizzle PostgreSQL database: the one `connectPostgres` / `connectEmbedded` return, or a host
 * application's own (node-postgres, PGlite, …) whose search path holds Stowage's tables.
 */
export type StowageDatabase = PgDatabase<PgQueryResultHKT, Record<string, unknown>>;

/** A database opened by Stowage, migrations applied. */
export interface StowageConnection {
  db: StowageDatabase;
  /** `pg` (a node-postgres Pool) or `pglite` (embedded). */
  driver: "pg" | "pglite";
  /** The PostgreSQL schema holding Stowage's tables. */
  schema: string;
  /** Closes the pool or the embedded database; safe to call twice. */
  close(): Promise<void>;
  /** `close()`, for `await using connection = await connectPostgres(…)`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The drizzle-kit migrations shipped with this package (`drizzle/`). A host that runs its own
 * migrations can apply them with drizzle's `migrate(db, { migrationsFolder })`.
 */
export const STOWAGE_MIGRATIONS_FOLDER = fileURLToPath(new URL("../drizzle", import.meta.url));

/** The schema used when none is given. */
export const DEFAULT_SCHEMA = "public";

/** A schema name Stowage creates and sets as the search path: lowercase, digits, `_`. */
export const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** The rows of a raw `db.execute` result, whichever driver ran it. */
export function rowsOf(result: unknown): Record<string, unknown>[] {
  const rows = (result as { rows?: unknown }).rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}

/** A Uint8Array view of driver bytes (node-postgres gives a Buffer), without copying. */
export function plainBytes(value: unknown): Uint8Array {
  const bytes = value as Uint8Array;
  return bytes.constructor === Uint8Array
    ? bytes
    : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The `db` option of a factory, checked to be a drizzle PostgreSQL database (it has `select`,
 * `execute` and `transaction`); INVALID_INPUT otherwise, e.g. for the pre-options-object call
 * `createPostgresSessionBlobs(db)`.
 */
export function assertDatabase(value: unknown, factory: string): StowageDatabase {
  const db = value as Partial<Record<"select" | "execute" | "transaction", unknown>> | undefined;
  if (
    typeof db !== "object" ||
    db === null ||
    typeof db.select !== "function" ||
    typeof db.execute !== "function" ||
    typeof db.transaction !== "function"
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `${factory}: db must be a drizzle PostgreSQL database ({ db } from connectPostgres or connectEmbedded), got ${describeValue(value)}`,
    );
  }
  return value as StowageDatabase;
}
