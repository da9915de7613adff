import { access } from "node:fs/promises";
import { join } from "node:path";
import type { SessionBlobRepository } from "@stowage/sessions";
import { connectEmbedded, connectPostgres } from "@stowage/storage-postgres";
import { createPostgresSessionBlobs } from "@stowage/storage-postgres/sessions";
import type { SessionBlobsConfig } from "../config.js";

/** The database alone with the session blobs in it; see {@link openSessionBlobs}. */
export interface SessionBlobStores {
  sessionBlobs: SessionBlobRepository;
  close(): Promise<void>;
}

/** Where the session blobs are, as a message names it. */
export function sessionBlobsPlace(config: SessionBlobsConfig): string {
  return config.database ? "the PostgreSQL database of DATABASE_URL" : `the data directory ${config.dataDir}`;
}

/** The data directory's embedded database, which opening would create when it is not there. */
function embeddedDatabase(config: SessionBlobsConfig): string {
  return join(config.dataDir, "pglite");
}

/**
 * Whether there is a database to read session blobs from: PostgreSQL when configured, else an
 * embedded database the data directory already holds (a read creates none).
 */
export async function sessionBlobsExist(config: SessionBlobsConfig): Promise<boolean> {
  if (config.database) return true;
  // PGlite writes PG_VERSION when it creates a database: a directory without it holds none yet.
  return access(join(embeddedDatabase(config), "PG_VERSION")).then(
    () => true,
    () => false,
  );
}

/**
 * Opens the database (PostgreSQL when configured, else the data directory's embedded PGlite) and
 * the session-blob repository in it, as the server does, and nothing else: no shared store, no
 * signing secret.
 */
export async function openSessionBlobs(config: SessionBlobsConfig): Promise<SessionBlobStores> {
  const database = config.database
    ? await connectPostgres(config.database)
    : await connectEmbedded({ dataDir: embeddedDatabase(config) });
  return {
    sessionBlobs: createPostgresSessionBlobs({ db: database.db, ttlMs: config.sessionTtlMs }),
    close: () => database.close(),
  };
}
