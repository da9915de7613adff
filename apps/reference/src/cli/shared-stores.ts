import { join } from "node:path";
import { createMemoryNotifier, type Notifier, type ObjectStore, type Principal } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import type { StowageConnection } from "@stowage/storage-postgres";
import type { DEFAULT_STORES, Tenant } from "@stowage/tenancy";
import { createSharedStores, type SharedStores } from "@stowage/tenancy/shared";
import type { StorageConfig } from "../config.js";
import { AGENT_SESSIONS_DIR, s3StoreFor } from "../shared-store.js";

// What a command on stored data opens: the shared store alone (S3, else PostgreSQL, else the data
// directory's file system), each backend's package loaded only when configured, and a principal's
// whole tenant only for the commands that use one. The server's services (services.ts) are never
// loaded: no embedded database, no signing secret, no server settings.

/** The shared store and the deployment's records in it; see {@link openStoredData}. */
export interface StoredData extends SharedStores {
  config: StorageConfig;
  close(): Promise<void>;
}

/** The stores a command serving a session reaches: the table without the database's parts. */
type ServedStores = Omit<typeof DEFAULT_STORES, "uploads" | "sessionBlobs" | "promptMetrics">;

/** {@link StoredData} with every principal's tenant over it; see {@link openSessionStores}. */
export interface SessionStores extends StoredData {
  /**
   * A principal's namespace (its registered sessions, blobs, threads, content refs, hot state…).
   * Its threads are told of posts by other processes only when {@link threadsNotifiedAcrossProcesses}.
   */
  tenant(principal: Principal): Tenant<ServedStores>;
  /**
   * True with a database (PostgreSQL LISTEN/NOTIFY, which the server posts through too); without
   * one the server's notifier lives in its own embedded database, so a watcher must poll.
   */
  threadsNotifiedAcrossProcesses: boolean;
}

/** The shared store of `config`, and the PostgreSQL connection it runs on when it does. */
async function sharedStoreOf(
  config: StorageConfig,
): Promise<{ shared: ObjectStore; database?: StowageConnection }> {
  if (config.s3) return { shared: await s3StoreFor(config.s3) };
  if (config.database) {
    const { connectPostgres, createPostgresObjectStore } = await import("@stowage/storage-postgres");
    const database = await connectPostgres(config.database);
    return { shared: createPostgresObjectStore({ db: database.db, namespace: "stowage" }), database };
  }
  return { shared: createFsObjectStore({ root: join(config.dataDir, "objects") }) };
}

/** Where the shared store is, as a message that found nothing names it. */
export function sharedStorePlace(config: StorageConfig): string {
  if (config.s3) return `the S3 bucket ${config.s3.bucket}`;
  if (config.database) return "the PostgreSQL database of DATABASE_URL";
  return `the data directory ${config.dataDir}`;
}

/**
 * Opens the shared store with the deployment's records in it (blobs, API keys, registered
 * sessions): the same data the server sees, loading only storage-fs, blob-store and tenancy's light
 * entry (and a backend when configured), so that `blob`, `keys` and `session register|list` start
 * fast and create nothing they do not write.
 */
export async function openStoredData(config: StorageConfig): Promise<StoredData> {
  const { shared, database } = await sharedStoreOf(config);
  return {
    ...createSharedStores({ shared, ...(config.encryption ? { encryption: config.encryption } : {}) }),
    config,
    close: async () => {
      await database?.close();
    },
  };
}

/**
 * {@link openStoredData} and every principal's tenant over it (sessions, threads, content refs, hot
 * state), for a command that serves a whole session (`stowage mcp`). With a database, thread posts
 * of other processes are heard through its LISTEN/NOTIFY.
 */
export async function openSessionStores(config: StorageConfig): Promise<SessionStores> {
  const stored = await openStoredData(config);
  let notifier: Notifier;
  let database: StowageConnection | undefined;
  try {
    const { createStowage, DEFAULT_STORES } = await import("@stowage/tenancy");
    if (config.database) {
      const { connectPostgres, createPostgresNotifier } = await import("@stowage/storage-postgres");
      database = await connectPostgres(config.database);
      notifier = createPostgresNotifier({ connection: database });
    } else {
      notifier = createMemoryNotifier();
    }
    // No database of the server's here: its uploads, stored sessions and prompt metrics are not served.
    const { uploads: _u, sessionBlobs: _s, promptMetrics: _p, ...served } = DEFAULT_STORES;
    // `stored.shared` is sealed already when the deployment is encrypted: not sealed twice.
    const stowage = createStowage({
      shared: stored.shared,
      notifier,
      agentSessionsDir: join(config.dataDir, AGENT_SESSIONS_DIR),
      stores: served,
    });
    return {
      ...stored,
      threadsNotifiedAcrossProcesses: database !== undefined,
      tenant: stowage.tenant,
      async close() {
        await notifier.close();
        await database?.close();
        await stored.close();
      },
    };
  } catch (err) {
    await database?.close().catch(() => {});
    await stored.close().catch(() => {});
    throw err;
  }
}
