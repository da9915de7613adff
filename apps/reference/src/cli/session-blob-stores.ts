import { access } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryNotifier } from "@stowage/core";
import type { SessionBlobRepository } from "@stowage/sessions";
import { createFsObjectStore } from "@stowage/storage-fs";
import {
  connectEmbedded,
  connectPostgres,
  createPostgresObjectStore,
  type StowageConnection,
} from "@stowage/storage-postgres";
import { createPostgresSessionBlobs } from "@stowage/storage-postgres/sessions";
import type { SessionBlobsConfig } from "../config.js";
import { AGENT_SESSIONS_DIR, s3StoreFor } from "../shared-store.js";

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
  try {
    const repository = createPostgresSessionBlobs({ db: database.db, ttlMs: config.sessionTtlMs });
    return {
      sessionBlobs: config.encryption ? await sealedLikeTheServer(config, repository, database) : repository,
      close: () => database.close(),
    };
  } catch (err) {
    await database.close().catch(() => {});
    throw err;
  }
}

/**
 * `repository` sealed as the server seals it: under the data keys in the deployment's shared store
 * (S3, else the database, else the data directory), so that either reads what the other stored.
 */
async function sealedLikeTheServer(
  config: SessionBlobsConfig,
  repository: SessionBlobRepository,
  database: StowageConnection,
): Promise<SessionBlobRepository> {
  const shared = config.s3
    ? await s3StoreFor(config.s3)
    : config.database
      ? createPostgresObjectStore({ db: database.db, namespace: "stowage" })
      : createFsObjectStore({ root: join(config.dataDir, "objects") });
  const { createStowage } = await import("@stowage/tenancy");
  const stowage = createStowage({
    shared,
    notifier: createMemoryNotifier(),
    agentSessionsDir: join(config.dataDir, AGENT_SESSIONS_DIR),
    sessionBlobs: repository,
    stores: {},
    ...(config.encryption ? { encryption: config.encryption } : {}),
  });
  return stowage.deployment.sessionBlobs!;
}
