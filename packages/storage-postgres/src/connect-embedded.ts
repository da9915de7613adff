import { consoleLogger, describeValue, type Logger, StowageError, throwIfAborted } from "@stowage/core";
import { importPeer, resolveSchema } from "./connect-options.js";
import { type DataDirLock, lockDataDir } from "./data-dir-lock.js";
import type { StowageConnection, StowageDatabase } from "./database.js";
import { fromDatabaseError } from "./database-errors.js";
import { registerListenSessions } from "./listen-sessions.js";
import { migrateStowage } from "./migrate-stowage.js";
import { PGLITE_BYTEA_CODECS } from "./pglite-bytea.js";

export interface ConnectEmbeddedOptions {
  /** Directory holding the database files (created if missing). Default: in memory (`memory://`). */
  dataDir?: string;
  /**
   * A dump of an embedded database (PGlite's `dumpDataDir()`, a tarball) that a new in-memory
   * database starts as, instead of running initdb: about a third of the CPU of a new database.
   * Migrations still run (a no-op when the dump had them). Not with `dataDir`. Default: none.
   */
  loadDataDir?: Blob;
  /** PostgreSQL schema for Stowage's tables, created and set as the search path. Default `public`. */
  schema?: string;
  /** Told when the connection closes itself because its data directory lock was taken away. Default `consoleLogger`. */
  logger?: Logger;
  signal?: AbortSignal;
}

/** Where a POSIX tar header says `ustar` (offset 257 of each 512-byte header). */
const TAR_MAGIC_OFFSET = 257;
const TAR_MAGIC = "ustar";

/**
 * Only an uncompressed tar (`dumpDataDir("none")`) goes to PGlite: it tries to gunzip anything
 * else, and a zlib error there escapes as an unhandled rejection, which ends the process.
 */
async function assertUncompressedDump(loadDataDir: unknown, dataDir: string | undefined): Promise<void> {
  if (dataDir !== undefined) {
    // Into a data directory, PGlite would write the dump over whatever database is there.
    throw new StowageError(
      "INVALID_INPUT",
      "loadDataDir starts an in-memory database; it cannot be combined with dataDir",
    );
  }
  if (!(loadDataDir instanceof Blob)) {
    throw new StowageError(
      "INVALID_INPUT",
      `loadDataDir must be a Blob (a dump from dumpDataDir("none")), got ${describeValue(loadDataDir)}`,
    );
  }
  const header = new Uint8Array(await loadDataDir.slice(0, 512).arrayBuffer());
  const magic = new TextDecoder().decode(
    header.subarray(TAR_MAGIC_OFFSET, TAR_MAGIC_OFFSET + TAR_MAGIC.length),
  );
  if (header.length < 512 || magic !== TAR_MAGIC) {
    throw new StowageError(
      "INVALID_INPUT",
      `loadDataDir is not an uncompressed tar (a dump from dumpDataDir("none")): ${loadDataDir.size} bytes without a tar header`,
    );
  }
}

/**
 * Opens an embedded PostgreSQL (PGlite, WebAssembly, in process) and applies Stowage's
 * migrations: the same tables and queries as `connectPostgres`, with no server to run.
 *
 * A `dataDir` is locked for as long as the connection is open (see the README): while another
 * process holds it, this fails with UNAVAILABLE, reason `DATA_DIR_LOCKED`, and `details` naming
 * the holder (`pid`, `hostname`, `since`). A crashed holder's lock is taken over.
 */
export async function connectEmbedded(options: ConnectEmbeddedOptions = {}): Promise<StowageConnection> {
  const { dataDir, loadDataDir, signal, logger = consoleLogger } = options;
  if (
    dataDir !== undefined &&
    (typeof dataDir !== "string" || dataDir === "" || dataDir.includes("\u0000"))
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `dataDir must be a non-empty path, got ${describeValue(dataDir)}`,
    );
  }
  if (loadDataDir !== undefined) await assertUncompressedDump(loadDataDir, dataDir);
  const schema = resolveSchema(options.schema);
  throwIfAborted(signal, "connect embedded");
  const { PGlite } = await importPeer("@electric-sql/pglite", () => import("@electric-sql/pglite"));
  const { drizzle } = await importPeer("drizzle-orm", () => import("drizzle-orm/pglite"));
  let client: InstanceType<typeof PGlite> | undefined;
  let lock: DataDirLock | undefined;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    try {
      await client?.close();
    } finally {
      await lock?.release();
    }
  };
  try {
    // The lock comes first: two PGlite instances on one directory lose rows.
    if (dataDir !== undefined) {
      lock = await lockDataDir(dataDir, () => {
        // Someone removed the lock by hand: stop writing rather than share the files.
        logger.warn(
          { reason: "DATA_DIR_LOCK_LOST" },
          "the embedded database's data directory lock was removed; the connection is closed to keep its files safe",
        );
        void close().catch(() => {});
      });
    }
    client = new PGlite(dataDir ?? "memory://", {
      ...PGLITE_BYTEA_CODECS,
      ...(loadDataDir ? { loadDataDir } : {}),
    });
    await client.waitReady;
    if (schema !== "public") {
      await client.exec(`CREATE SCHEMA IF NOT EXISTS "${schema}"; SET search_path TO "${schema}";`);
    }
    throwIfAborted(signal, "connect embedded");
    const db = drizzle({ client }) as unknown as StowageDatabase;
    await migrateStowage({ db, schema, ...(signal ? { signal } : {}) });
    const connection: StowageConnection = {
      db,
      driver: "pglite",
      schema,
      close,
      [Symbol.asyncDispose]: close,
    };
    const pglite = client;
    // One process: notifications go through PGlite's own LISTEN/NOTIFY, nothing to lose.
    registerListenSessions(connection, async (channel, { onMessage }) => {
      const unlisten = await pglite.listen(channel, onMessage);
      return { close: () => unlisten() };
    });
    return connection;
  } catch (err) {
    await close().catch(() => {});
    throw fromDatabaseError(err, "connect embedded");
  }
}
