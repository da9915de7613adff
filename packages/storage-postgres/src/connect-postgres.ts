import { describeValue, StowageError, throwIfAborted } from "@stowage/core";
import { importPeer, resolveSchema } from "./connect-options.js";
import type { StowageConnection, StowageDatabase } from "./database.js";
import { fromDatabaseError } from "./database-errors.js";
import { registerListenSessions } from "./listen-sessions.js";
import { migrateStowage } from "./migrate-stowage.js";
import { registerParsedOnArrival } from "./rows-parsed-on-arrival.js";

/** Connections in the pool when `maxConnections` is not given (node-postgres's own default). */
const DEFAULT_MAX_CONNECTIONS = 10;

export interface ConnectPostgresOptions {
  /**
   * `postgres://user@host:5432/db` (any node-postgres connection string). `undefined` is
   * accepted by the type so that `{ url: process.env.DATABASE_URL }` compiles, and refused at run
   * time with INVALID_INPUT saying that no URL was given.
   */
  url: string | undefined;
  /**
   * PostgreSQL schema for Stowage's tables: created if missing and set as every connection's
   * search path; its migration history is kept in the same schema (`stowage_migrations`). Default `public`.
   */
  schema?: string;
  /** Pool size. Default 10. */
  maxConnections?: number;
  signal?: AbortSignal;
}

/**
 * Opens a node-postgres pool and applies Stowage's migrations with `migrateStowage` (under an
 * advisory lock, so that processes starting together do not race). Fails with UNAVAILABLE when the server is unreachable.
 */
export async function connectPostgres(options: ConnectPostgresOptions): Promise<StowageConnection> {
  const { url, signal } = options ?? ({} as ConnectPostgresOptions);
  if (url === undefined || url === "") {
    throw new StowageError(
      "INVALID_INPUT",
      "url is missing: give a postgres:// connection string (is DATABASE_URL set?), or use connectEmbedded",
    );
  }
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
  const db = drizzle({ client: pool }) as unknown as StowageDatabase;
  registerParsedOnArrival(db, pool);
  try {
    await migrateStowage({ db, schema, ...(signal ? { signal } : {}) });
  } catch (err) {
    await close().catch(() => {});
    throw fromDatabaseError(err, "connect postgres");
  }
  const connection: StowageConnection = { db, driver: "pg", schema, close, [Symbol.asyncDispose]: close };
  // LISTEN needs a connection of its own, held for as long as someone listens: not one of the pool's.
  registerListenSessions(connection, async (channel, handlers) => {
    const client = new pg.Client({ connectionString: url });
    let closing = false;
    const lost = (err: unknown) => {
      if (closing) return;
      closing = true;
      client.end().catch(() => {});
      handlers.onLost(err);
    };
    client.on("error", lost);
    client.on("end", () => lost(new Error("listen connection ended")));
    client.on("notification", (notification) => {
      if (notification.channel === channel) handlers.onMessage(notification.payload ?? "");
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${channel}"`);
    } catch (err) {
      closing = true;
      await client.end().catch(() => {});
      throw fromDatabaseError(err, "listen");
    }
    return {
      async close() {
        if (closing) return;
        closing = true;
        await client.end().catch(() => {});
      },
    };
  });
  return connection;
}
