import {
  bytesToStream,
  DEFAULT_LIST_LIMIT,
  defineObjectStore,
  describeValue,
  type ObjectStore,
  type ObjectStoreDriver,
  pathSegmentProblem,
  readStreamToBytes,
  StowageError,
} from "@stowage/core";
import { and, eq, gt, gte, type SQL, sql } from "drizzle-orm";
import { assertDatabase, plainBytes, rowsOf, type StowageDatabase } from "./database.js";
import { fromDatabaseError } from "./database-errors.js";
import { blobs } from "./schema.js";

/** Largest object `put` accepts by default: 64 MiB (bytea can hold 1 GB, but it travels in memory). */
export const DEFAULT_MAX_OBJECT_BYTES = 64 * 1024 * 1024;
/** The largest `maxObjectBytes` allowed: PostgreSQL's 1 GB field limit, less protocol overhead. */
export const MAX_OBJECT_BYTES_LIMIT = 1024 * 1024 * 1024 - 64 * 1024;
/** The namespace used when none is given. */
export const DEFAULT_OBJECT_NAMESPACE = "default";

export interface PostgresObjectStoreOptions {
  /** A database with Stowage's tables: `connectPostgres`/`connectEmbedded`'s `db`, or the host's own. */
  db: StowageDatabase;
  /** Scopes the keys: stores with different namespaces share the table, never a key. Default `default`. */
  namespace?: string;
  /** Default {@link DEFAULT_MAX_OBJECT_BYTES}. */
  maxObjectBytes?: number;
}

const encodeCursor = (key: string) => Buffer.from(key, "utf8").toString("base64url");

function decodeCursor(cursor: string): string {
  const key = Buffer.from(cursor, "base64url").toString("utf8");
  if (encodeCursor(key) !== cursor) {
    throw new StowageError(
      "INVALID_INPUT",
      `cursor is not one this store returned, got ${describeValue(cursor)}`,
    );
  }
  return key;
}

/**
 * An ObjectStore over the `blobs` table: one row per key, keys compared in byte order
 * (`COLLATE "C"`, so listing is UTF-8 byte order), create-only puts as a conditional insert,
 * native move and touch inside the database.
 */
export function createPostgresObjectStore(options: PostgresObjectStoreOptions): ObjectStore {
  const db = assertDatabase(options?.db, "createPostgresObjectStore");
  const namespace = options.namespace ?? DEFAULT_OBJECT_NAMESPACE;
  const problem = pathSegmentProblem(namespace);
  if (problem)
    throw new StowageError("INVALID_INPUT", `namespace ${problem}, got ${describeValue(namespace)}`);
  const maxObjectBytes = options.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
  if (
    !Number.isSafeInteger(maxObjectBytes) ||
    maxObjectBytes < 1 ||
    maxObjectBytes > MAX_OBJECT_BYTES_LIMIT
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `maxObjectBytes must be an integer from 1 to ${MAX_OBJECT_BYTES_LIMIT}, got ${describeValue(maxObjectBytes)}`,
    );
  }
  const at = (key: string): SQL => and(eq(blobs.namespace, namespace), eq(blobs.key, key))!;

  const driver: ObjectStoreDriver = {
    name: "postgres",
    atomicCreateOnly: true,
    keepsContentType: true,
    // move copies the row's last_modified into the new row.
    moveKeepsLastModified: true,
    // Every method's errors (SQLSTATE, network) are mapped here, once, by defineObjectStore.
    mapError: fromDatabaseError,

    async put(key, body, { ifNoneMatch, contentType, signal }) {
      const bytes =
        body instanceof Uint8Array
          ? body
          : await readStreamToBytes(body, { maxBytes: maxObjectBytes, ...(signal ? { signal } : {}) });
      if (bytes.byteLength > maxObjectBytes) {
        throw new StowageError("TOO_LARGE", `postgres put: object is larger than ${maxObjectBytes} bytes`, {
          details: { limit: maxObjectBytes, size: bytes.byteLength },
        });
      }
      const row = { namespace, key, body: bytes, size: bytes.byteLength, contentType: contentType ?? null };
      if (ifNoneMatch === "*") {
        const inserted = await db
          .insert(blobs)
          .values(row)
          .onConflictDoNothing()
          .returning({ key: blobs.key });
        if (inserted.length === 0) {
          throw new StowageError("ALREADY_EXISTS", `postgres put: ${describeValue(key)} already exists`);
        }
        return { key, size: bytes.byteLength, created: true };
      }
      const [result] = await db
        .insert(blobs)
        .values(row)
        .onConflictDoUpdate({
          target: [blobs.namespace, blobs.key],
          set: {
            body: sql`excluded.body`,
            size: sql`excluded.size`,
            contentType: sql`excluded.content_type`,
            lastModified: sql`clock_timestamp()`,
          },
        })
        // xmax is 0 on a freshly inserted row version, non-zero on one an upsert updated.
        .returning({ created: sql<boolean>`(xmax = 0)` });
      return { key, size: bytes.byteLength, created: result!.created };
    },

    async get(key) {
      const [row] = await db.select({ body: blobs.body }).from(blobs).where(at(key));
      return row ? plainBytes(row.body) : null;
    },

    async stream(key) {
      const bytes = await driver.get(key, {});
      return bytes && bytesToStream(bytes);
    },

    async head(key) {
      const [row] = await db
        .select({ size: blobs.size, lastModified: blobs.lastModified, contentType: blobs.contentType })
        .from(blobs)
        .where(at(key));
      if (!row) return null;
      return {
        size: row.size,
        lastModified: row.lastModified,
        ...(row.contentType === null ? {} : { contentType: row.contentType }),
      };
    },

    async delete(key) {
      await db.delete(blobs).where(at(key));
    },

    async list({ prefix, cursor, limit = DEFAULT_LIST_LIMIT }) {
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      const rows = await db
        .select({ key: blobs.key, size: blobs.size, lastModified: blobs.lastModified })
        .from(blobs)
        .where(
          and(
            eq(blobs.namespace, namespace),
            // The range condition lets the primary key index do the work; starts_with is exact.
            gte(blobs.key, prefix),
            sql`starts_with(${blobs.key}, ${prefix})`,
            after === undefined ? undefined : gt(blobs.key, after),
          ),
        )
        .orderBy(blobs.key)
        .limit(limit + 1);
      const items = rows.slice(0, limit);
      return {
        items,
        cursor: rows.length > limit ? encodeCursor(items[items.length - 1]!.key) : undefined,
      };
    },

    async move(from, to, { ifNoneMatch, signal }) {
      return db.transaction(async (tx) => {
        const [source] = await tx.select({ size: blobs.size }).from(blobs).where(at(from)).for("update");
        if (!source)
          throw new StowageError("NOT_FOUND", `postgres move: ${describeValue(from)} does not exist`);
        // The bytes are copied inside the database, never through this process.
        const copy = sql`
          INSERT INTO ${blobs} (namespace, key, body, size, content_type, last_modified)
          SELECT namespace, ${to}, body, size, content_type, last_modified FROM ${blobs}
          WHERE namespace = ${namespace} AND key = ${from}`;
        let created: boolean;
        if (ifNoneMatch === "*") {
          const inserted = await tx.execute(sql`${copy} ON CONFLICT DO NOTHING RETURNING 1 AS inserted`);
          if (rowsOf(inserted).length !== 1) {
            throw new StowageError("ALREADY_EXISTS", `postgres move: ${describeValue(to)} already exists`);
          }
          created = true;
        } else {
          const upserted = await tx.execute(sql`${copy}
            ON CONFLICT (namespace, key) DO UPDATE SET body = excluded.body, size = excluded.size,
              content_type = excluded.content_type, last_modified = excluded.last_modified
            RETURNING (xmax = 0) AS created`);
          created = rowsOf(upserted)[0]?.created === true;
        }
        await tx.delete(blobs).where(at(from));
        if (signal?.aborted)
          throw new StowageError("ABORTED", `postgres move ${describeValue(from)}: aborted`);
        return { key: to, size: source.size, created };
      });
    },

    async touch(key) {
      const rows = await db
        .update(blobs)
        .set({ lastModified: sql`clock_timestamp()` })
        .where(at(key))
        .returning({ key: blobs.key });
      return rows.length === 1;
    },
  };
  return defineObjectStore(driver);
}
