import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import type { S3Client } from "@aws-sdk/client-s3";
import { referenceSource } from "@stowage/bench-kit";
import { createBlobStore } from "@stowage/blob-store";
import { mapConcurrent, type ObjectStore } from "@stowage/core";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3OptionsFromEnv } from "@stowage/storage-s3/env";
import { createObjectSessionStore, type SessionStoreEntry } from "../src/index.js";

/**
 * The SessionStores issue 29 compares, each able to make a fresh instance (its own prefix or
 * namespace, so no run meets an earlier run's blobs), count what one session stored, and remove it.
 * Ours with a blob store on the same backend; the Agent SDK's reference S3 and PostgreSQL adapters
 * (`examples/session-stores/`, not on npm) brought next to this bench at run time, never committed.
 */

export interface SessionKey {
  projectKey: string;
  sessionId: string;
}

export interface AnyStore {
  append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void>;
  load(key: SessionKey): Promise<SessionStoreEntry[] | null>;
}

/** One fresh instance of a store: where its bytes are counted and removed. */
export interface StoreInstance {
  store: AnyStore;
  /** Bytes this instance keeps for the session at `key` (and, for ours, the blobs it put). */
  storedBytes(key: SessionKey): Promise<number>;
  /** Removes what this instance stored. */
  remove(key: SessionKey): Promise<void>;
}

export interface Backend {
  /** "S3 (Ceph RGW)", "PostgreSQL". */
  name: string;
  /** Where the peer's source came from. */
  peerOrigin: string;
  ours(): Promise<StoreInstance>;
  reference(): Promise<StoreInstance>;
  close(): Promise<void>;
}

/** Where a peer's source is written for its import: one directory per backend, set up side by side. */
const referenceDirectory = (backend: string) =>
  new URL(`./.reference-${process.pid}-${backend}/`, import.meta.url).pathname;

async function sizeUnder(store: ObjectStore): Promise<number> {
  let bytes = 0;
  for await (const item of store.iterate({ prefix: "" })) bytes += item.size;
  return bytes;
}

async function removeUnder(store: ObjectStore): Promise<void> {
  const keys: string[] = [];
  for await (const item of store.iterate({ prefix: "" })) keys.push(item.key);
  await mapConcurrent(keys, 16, (key) => store.delete(key));
}

/** Ceph RGW from `S3_*`, or undefined (with the reason printed) when they are not set. */
export async function s3Backend(): Promise<Backend | undefined> {
  const s3 = s3OptionsFromEnv(process.env);
  if (!s3) {
    console.warn('S3 cases skipped: S3_ENDPOINT and S3_BUCKET are not set (eval "$(tooling/rgw/start.sh)")');
    return undefined;
  }
  const client: S3Client = createS3Client(s3.client);
  const root = `bench/store-once/${randomUUID()}`;
  const objects = (prefix: string) => createS3ObjectStore({ client, bucket: s3.bucket, prefix });
  const source = await referenceSource({
    repo: "anthropics/claude-agent-sdk-typescript",
    path: "examples/session-stores/s3/src/S3SessionStore.ts",
    directory: referenceDirectory("s3"),
  });
  const { S3SessionStore } = (await import(source.file)) as {
    S3SessionStore: new (options: { bucket: string; prefix: string; client: S3Client }) => AnyStore;
  };
  await source.dispose();
  return {
    name: "S3 (Ceph RGW)",
    peerOrigin: source.origin,
    async ours() {
      const run = `${root}/ours-${randomUUID()}`;
      const parts = objects(`${run}/sessions/`);
      const blobObjects = objects(`${run}/blobs/`);
      // `remove` deletes for good, not into the trash.
      const store = createObjectSessionStore({
        store: parts,
        blobs: createBlobStore({ store: blobObjects }),
        trashDays: 0,
      });
      return {
        store,
        storedBytes: async () => (await sizeUnder(parts)) + (await sizeUnder(blobObjects)),
        remove: async () => {
          await removeUnder(parts);
          await removeUnder(blobObjects);
        },
      };
    },
    async reference() {
      const prefix = `${root}/peer-${randomUUID()}`;
      const store = new S3SessionStore({ bucket: s3.bucket, prefix, client });
      // The peer's delete sends DeleteObjects, which RGW refuses without Content-MD5: its objects
      // are counted and deleted through an ObjectStore on its prefix instead.
      const own = objects(`${prefix}/`);
      return { store, storedBytes: () => sizeUnder(own), remove: () => removeUnder(own) };
    },
    close: async () => client.destroy(),
  };
}

interface PgPool {
  query<Row>(sql: string, values?: unknown[]): Promise<{ rows: Row[] }>;
  end(): Promise<void>;
}

/**
 * PostgreSQL from `DATABASE_URL`, or undefined when it is not set. `@stowage/storage-postgres`
 * is loaded from its source in this repository by path: it depends on this package, so a
 * dependency back would be a cycle in the workspace graph. Both stores get a schema of their own
 * and a pool of node-postgres' default size.
 */
export async function postgresBackend(): Promise<Backend | undefined> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.warn("PostgreSQL cases skipped: DATABASE_URL is not set");
    return undefined;
  }
  const storagePostgres = new URL("../../storage-postgres/src/", import.meta.url);
  type Connection = { db: unknown; close(): Promise<void> };
  const { connectPostgres, createPostgresObjectStore } = (await import(
    new URL("index.ts", storagePostgres).href
  )) as {
    connectPostgres(options: { url: string; schema: string }): Promise<Connection>;
    createPostgresObjectStore(options: { db: unknown; namespace: string }): ObjectStore;
  };
  const { createPostgresSessionStore } = (await import(
    new URL("sessions/index.ts", storagePostgres).href
  )) as {
    createPostgresSessionStore(options: {
      db: unknown;
      blobs: ReturnType<typeof createBlobStore>;
      trashDays: number;
    }): AnyStore & {
      delete(key: SessionKey): Promise<void>;
    };
  };
  // node-postgres as storage-postgres has it: the reference adapter takes a pool of it.
  const pgEntry = createRequire(new URL("../package.json", storagePostgres)).resolve("pg");
  const { default: pg } = (await import(pathToFileURL(pgEntry).href)) as {
    default: { Pool: new (options: { connectionString: string; options?: string }) => PgPool };
  };
  const schema = `bench_store_once_${process.pid}`;
  const connection = await connectPostgres({ url, schema });
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}` });
  const source = await referenceSource({
    repo: "anthropics/claude-agent-sdk-typescript",
    path: "examples/session-stores/postgres/src/PostgresSessionStore.ts",
    directory: referenceDirectory("postgres"),
  });
  const { PostgresSessionStore } = (await import(source.file)) as {
    PostgresSessionStore: new (options: {
      pool: PgPool;
    }) => AnyStore & {
      ensureSchema(): Promise<void>;
      delete(key: SessionKey): Promise<void>;
    };
  };
  await source.dispose();
  const peer = new PostgresSessionStore({ pool });
  await peer.ensureSchema();
  const sum = async (sql: string, values: unknown[]) =>
    Number((await pool.query<{ bytes: string | null }>(sql, values)).rows[0]?.bytes ?? 0);
  return {
    name: "PostgreSQL",
    peerOrigin: source.origin,
    async ours() {
      const namespace = `bench-${randomUUID()}`;
      const blobs = createBlobStore({ store: createPostgresObjectStore({ db: connection.db, namespace }) });
      const store = createPostgresSessionStore({ db: connection.db, blobs, trashDays: 0 });
      // pg_column_size: what a value takes in its row or TOAST, after PostgreSQL's own compression.
      return {
        store,
        storedBytes: async (key) =>
          (await sum(
            "SELECT sum(pg_column_size(entry) + coalesce(pg_column_size(uuid), 0)) AS bytes FROM session_store_entries WHERE project_key = $1 AND session_id = $2",
            [key.projectKey, key.sessionId],
          )) +
          (await sum(
            "SELECT sum(coalesce(pg_column_size(summary), 0)) AS bytes FROM session_store_keys WHERE project_key = $1 AND session_id = $2",
            [key.projectKey, key.sessionId],
          )) +
          (await sum("SELECT sum(pg_column_size(body)) AS bytes FROM blobs WHERE namespace = $1", [
            namespace,
          ])),
        remove: async (key) => {
          await store.delete(key);
          await pool.query("DELETE FROM blobs WHERE namespace = $1", [namespace]);
        },
      };
    },
    async reference() {
      return {
        store: peer,
        storedBytes: (key) =>
          sum(
            "SELECT sum(pg_column_size(entry)) AS bytes FROM claude_session_entries WHERE project_key = $1 AND session_id = $2",
            [key.projectKey, key.sessionId],
          ),
        remove: (key) => peer.delete(key),
      };
    },
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
      await connection.close();
    },
  };
}
