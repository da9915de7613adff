import { join } from "node:path";
import type { BlobStore } from "@stowage/blob-store";
import { createMemoryNotifier, type Notifier, type ObjectStore } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import type { StowageConnection } from "@stowage/storage-postgres";
import { type ApiKeys, createApiKeys, type Principal } from "@stowage/uploads";
import { createApiKeyRecords } from "../auth/api-key-records.js";
import type { StorageConfig } from "../config.js";
import { AGENT_SESSIONS_DIR, blobStoreIn, s3StoreFor } from "../shared-store.js";
import { type RegisteredSessions, registeredSessionsOf } from "../tenancy/registered-sessions.js";
import type { Tenant } from "../tenancy/tenants.js";

// What a command on stored data opens: the shared store alone (S3, else PostgreSQL, else the data
// directory's file system), each backend's package loaded only when configured, and a principal's
// whole tenant only for the commands that use one. The server's services (services.ts) are never
// loaded: no embedded database, no signing secret, no server settings.

/** The shared store and what lives in it; see {@link openStoredData}. */
export interface StoredData {
  config: StorageConfig;
  shared: ObjectStore;
  blobs: BlobStore;
  apiKeys: ApiKeys;
  /** The session ids registered in a principal's namespace. */
  registeredSessions(principal: Principal): RegisteredSessions;
  close(): Promise<void>;
}

/** {@link StoredData} with every principal's whole namespace; see {@link openSharedStores}. */
export interface SharedStores extends StoredData {
  /**
   * A principal's namespace (its registered sessions, blobs…). Its threads are told of posts by
   * other processes only when {@link SharedStores.threadsNotifiedAcrossProcesses}.
   */
  tenant(principal: Tenant["principal"]): Tenant;
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

/**
 * Opens the shared store with the blobs, API keys and registered sessions in it: the same data the
 * server sees, loading only storage-fs, blob-store and uploads (and a backend when configured), so
 * that `blob`, `keys` and `session register|list` start fast and create nothing they do not write.
 */
export async function openStoredData(config: StorageConfig): Promise<StoredData> {
  const { shared, database } = await sharedStoreOf(config);
  return {
    config,
    shared,
    blobs: blobStoreIn(shared),
    apiKeys: createApiKeys({ records: createApiKeyRecords({ store: shared }) }),
    registeredSessions: (principal) => registeredSessionsOf(shared, principal),
    close: async () => {
      await database?.close();
    },
  };
}

/**
 * {@link openStoredData} and every principal's tenant over it (sessions, threads, content refs,
 * hot state), for a command that serves a whole session (`stowage mcp`). With a database, thread
 * posts of other processes are heard through its LISTEN/NOTIFY.
 */
export async function openSharedStores(config: StorageConfig): Promise<SharedStores> {
  const stored = await openStoredData(config);
  let notifier: Notifier;
  let database: StowageConnection | undefined;
  try {
    const { createTenants } = await import("../tenancy/tenants.js");
    if (config.database) {
      const { connectPostgres, createPostgresNotifier } = await import("@stowage/storage-postgres");
      database = await connectPostgres(config.database);
      notifier = createPostgresNotifier({ connection: database });
    } else {
      notifier = createMemoryNotifier();
    }
    return {
      ...stored,
      threadsNotifiedAcrossProcesses: database !== undefined,
      tenant: createTenants({
        agentSessionsDir: join(config.dataDir, AGENT_SESSIONS_DIR),
        shared: stored.shared,
        blobs: stored.blobs,
        notifier,
      }),
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
