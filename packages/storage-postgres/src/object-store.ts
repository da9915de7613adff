import {
  bytesToStream,
  defineObjectStore,
  describeValue,
  type ObjectStore,
  type ObjectStoreDriver,
  StowageError,
} from "@stowage/core";
import { assertDatabase, type StowageDatabase } from "./database.js";
import { fromDatabaseError } from "./database-errors.js";
import { batchedGets } from "./object-store-batched-gets.js";
import {
  assertNamespace,
  DEFAULT_OBJECT_NAMESPACE,
  type ObjectStoreContext,
} from "./object-store-context.js";
import { headObject, listObjects } from "./object-store-reads.js";
import { deleteObject, moveObject, putObject, touchObject } from "./object-store-writes.js";

/** Largest object `put` accepts by default: 64 MiB (bytea can hold 1 GB, but it travels in memory). */
const DEFAULT_MAX_OBJECT_BYTES = 64 * 1024 * 1024;
/** The largest `maxObjectBytes` allowed: PostgreSQL's 1 GB field limit, less protocol overhead. */
export const MAX_OBJECT_BYTES_LIMIT = 1024 * 1024 * 1024 - 64 * 1024;

export interface PostgresObjectStoreOptions {
  /** A database with Stowage's tables: `connectPostgres`/`connectEmbedded`'s `db`, or the host's own. */
  db: StowageDatabase;
  /** Scopes the keys: stores with different namespaces share the table, never a key. Default `default`. */
  namespace?: string;
  /** Largest object `put` accepts, at most 1 GiB − 64 KiB. Default 64 MiB. */
  maxObjectBytes?: number;
}

function contextOf(options: PostgresObjectStoreOptions): ObjectStoreContext {
  const db = assertDatabase(options?.db, "createPostgresObjectStore");
  const namespace = assertNamespace(options.namespace ?? DEFAULT_OBJECT_NAMESPACE);
  const maxObjectBytes = options.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
  if (
    !Number.isSafeInteger(maxObjectBytes) ||
    maxObjectBytes < 1 ||
    maxObjectBytes > MAX_OBJECT_BYTES_LIMIT
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `maxObjectBytes must be an integer from 1 to ${MAX_OBJECT_BYTES_LIMIT}, got ${describeValue(maxObjectBytes)}`,
      { details: { limit: MAX_OBJECT_BYTES_LIMIT } },
    );
  }
  return { db, namespace, maxObjectBytes };
}

/**
 * An ObjectStore over the `blobs` table: one row per key, keys compared in byte order
 * (`COLLATE "C"`, so listing is UTF-8 byte order), create-only puts as a conditional insert,
 * native move and touch inside the database.
 */
export function createPostgresObjectStore(options: PostgresObjectStoreOptions): ObjectStore {
  const context = contextOf(options);
  const get = batchedGets(context);
  const driver: ObjectStoreDriver = {
    name: "postgres",
    atomicCreateOnly: true,
    keepsContentType: true,
    // move copies the row's last_modified into the new row.
    moveKeepsLastModified: true,
    // Every method's errors (SQLSTATE, network) are mapped here, once, by defineObjectStore.
    mapError: fromDatabaseError,
    put: (key, body, putOptions) => putObject(context, key, body, putOptions),
    get,
    stream: async (key) => {
      const bytes = await get(key);
      return bytes && bytesToStream(bytes);
    },
    head: (key) => headObject(context, key),
    delete: (key) => deleteObject(context, key),
    list: (listOptions) => listObjects(context, listOptions),
    move: (from, to, moveOptions) => moveObject(context, from, to, moveOptions),
    touch: (key) => touchObject(context, key),
  };
  return defineObjectStore(driver);
}
