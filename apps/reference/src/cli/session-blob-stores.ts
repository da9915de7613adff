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

/**
 * Opens the database (PostgreSQL when configured, else the data directory's embedded PGlite) and
 * the session-blob repository in it, as the server does, and nothing else: no shared store, no
 * signing secret.
 */
export async function openSessionBlobs(config: SessionBlobsConfig): Promise<SessionBlobStores> {
  const database = config.database
    ? await connectPostgres(config.database)
    : await connectEmbedded({ dataDir: join(config.dataDir, "pglite") });
  return {
    sessionBlobs: createPostgresSessionBlobs({ db: database.db, ttlMs: config.sessionTtlMs }),
    close: () => database.close(),
  };
}
