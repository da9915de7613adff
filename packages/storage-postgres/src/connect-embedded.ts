import { describeValue, StowageError, throwIfAborted } from "@stowage/core";
import { importPeer, resolveSchema } from "./connect-options.js";
import { STOWAGE_MIGRATIONS_FOLDER, type StowageConnection, type StowageDatabase } from "./database.js";
import { fromDatabaseError } from "./database-errors.js";

export interface ConnectEmbeddedOptions {
  /** Directory holding the database files (created if missing). Default: in memory (`memory://`). */
  dataDir?: string;
  /** PostgreSQL schema for Stowage's tables, created and set as the search path. Default `public`. */
  schema?: string;
  signal?: AbortSignal;
}

/**
 * Opens an embedded PostgreSQL (PGlite, WebAssembly, in process) and applies Stowage's
 * migrations: the same tables and queries as `connectPostgres`, with no server to run. One
 * process at a time may open a data directory.
 */
export async function connectEmbedded(options: ConnectEmbeddedOptions = {}): Promise<StowageConnection> {
  const { dataDir, signal } = options;
  if (
    dataDir !== undefined &&
    (typeof dataDir !== "string" || dataDir === "" || dataDir.includes("\u0000"))
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `dataDir must be a non-empty path, got ${describeValue(dataDir)}`,
    );
  }
  const schema = resolveSchema(options.schema);
  throwIfAborted(signal, "connect embedded");
  const { PGlite } = await importPeer("@electric-sql/pglite", () => import("@electric-sql/pglite"));
  const { drizzle } = await importPeer("drizzle-orm", () => import("drizzle-orm/pglite"));
  const { migrate } = await importPeer("drizzle-orm", () => import("drizzle-orm/pglite/migrator"));
  let client: InstanceType<typeof PGlite> | undefined;
  let closed = false;
  const close = async () => {
    if (closed || !client) return;
    closed = true;
    await client.close();
  };
  try {
    client = new PGlite(dataDir ?? "memory://");
    await client.waitReady;
    if (schema !== "public") {
      await client.exec(`CREATE SCHEMA IF NOT EXISTS "${schema}"; SET search_path TO "${schema}";`);
    }
    throwIfAborted(signal, "connect embedded");
    const db = drizzle({ client });
    await migrate(db, {
      migrationsFolder: STOWAGE_MIGRATIONS_FOLDER,
      ...(schema === "public" ? {} : { migrationsSchema: schema }),
    });
    return { db: db as unknown as StowageDatabase, driver: "pglite", schema, close };
  } catch (err) {
    await close().catch(() => {});
    throw fromDatabaseError(err, "connect embedded");
  }
}
