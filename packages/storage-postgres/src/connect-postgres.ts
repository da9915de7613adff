import { describeValue, StowageError, throwIfAborted } from "@stowage/core";
import { importPeer, resolveSchema } from "./connect-options.js";
import { STOWAGE_MIGRATIONS_FOLDER, type StowageConnection, type StowageDatabase } from "./database.js";
import { fromDatabaseError } from "./database-errors.js";

/** Connections in the pool when `maxConnections` is not given (node-postgres's own default). */
export const DEFAULT_MAX_CONNECTIONS = 10;
/** Advisory lock key held while migrating, so that concurrent processes migrate one at a time. */
export const MIGRATION_LOCK_KEY = 0x5354_4f57; // "STOW"

export interface ConnectPostgresOptions {
  /** `postgres://user@host:5432/db` (any node-postgres connection string). */
  url: string;
  /**
   * PostgreSQL schema for Stowage's tables: created if missing and set as every connection's
   * search path; its migration history is kept in the same schema. Default `public`.
   */
  schema?: string;
  /** Pool size. Default {@link DEFAULT_MAX_CONNECTIONS}. */
  maxConnections?: number;
  signal?: AbortSignal;
}

/**
 * Opens a node-postgres pool and applies Stowage's migrations (under an advisory lock, so that
 * processes starting together do not race). Fails with UNAVAILABLE when the server is unreachable.
 */
export async function connectPostgres(options: ConnectPostgresOptions): Promise<StowageConnection> {
  const { url, signal } = options ?? ({} as ConnectPostgresOptions);
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//.test(url)) {
    throw new StowageError(
      "INVALID_INPUT",
      `url must be a postgres:// or postgresql:// connection string, got ${describeValue(url && "(redacted)")}`,
    );
  }
  const schema = resolveSchema(options.schema);
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1) {
    throw new StowageError(
      "INVALID_INPUT",
      `maxConnections must be a positive integer, got ${describeValue(maxConnections)}`,
    );
  }
  throwIfAborted(signal, "connect postgres");
  const pg = await importPeer("pg", async () => (await import("pg")).default);
  const { drizzle } = await importPeer("drizzle-orm", () => import("drizzle-orm/node-postgres"));
  const { migrate } = await importPeer("drizzle-orm", () => import("drizzle-orm/node-postgres/migrator"));
  const pool = new pg.Pool({
    connectionString: url,
    max: maxConnections,
    // Every connection sees Stowage's tables first; `pg_catalog` is always searched.
    options: `-c search_path=${schema}`,
  });
  // An idle client that loses its server emits here; without a listener the process would crash.
  pool.on("error", () => {});
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await pool.end();
  };
  try {
    const client = await pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
      try {
        throwIfAborted(signal, "connect postgres");
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        await migrate(drizzle({ client }), {
          migrationsFolder: STOWAGE_MIGRATIONS_FOLDER,
          ...(schema === "public" ? {} : { migrationsSchema: schema }),
        });
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
      }
    } finally {
      client.release();
    }
  } catch (err) {
    await close().catch(() => {});
    throw fromDatabaseError(err, "connect postgres");
  }
  return { db: drizzle({ client: pool }) as unknown as StowageDatabase, driver: "pg", schema, close };
}
