import {
  describeValue,
  type MoveOptions,
  type ObjectBody,
  type PutOptions,
  type PutResult,
  readStreamToBytes,
  StowageError,
} from "@stowage/core";
import { sql } from "drizzle-orm";
import { rowsOf } from "./database.js";
import { type ObjectStoreContext, rowOf } from "./object-store-context.js";
import { blobs } from "./schema.js";

/** Stores `body` under `key`: a conditional insert when create-only, else an upsert. */
export async function putObject(
  context: ObjectStoreContext,
  key: string,
  body: ObjectBody,
  { ifNoneMatch, contentType, signal }: PutOptions,
): Promise<PutResult> {
  const { db, namespace, maxObjectBytes } = context;
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
    const inserted = await db.insert(blobs).values(row).onConflictDoNothing().returning({ key: blobs.key });
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
}

/**
 * Moves `from` to `to` in one transaction: the row is copied inside the database (the bytes never
 * pass through this process, and its `last_modified` goes with it), then the source is deleted.
 */
export async function moveObject(
  context: ObjectStoreContext,
  from: string,
  to: string,
  { ifNoneMatch, signal }: MoveOptions,
): Promise<PutResult> {
  const { db, namespace } = context;
  return db.transaction(async (tx) => {
    const [source] = await tx
      .select({ size: blobs.size })
      .from(blobs)
      .where(rowOf(context, from))
      .for("update");
    if (!source) throw new StowageError("NOT_FOUND", `postgres move: ${describeValue(from)} does not exist`);
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
    await tx.delete(blobs).where(rowOf(context, from));
    if (signal?.aborted) throw new StowageError("ABORTED", `postgres move ${describeValue(from)}: aborted`);
    return { key: to, size: source.size, created };
  });
}

/** Sets `key`'s `last_modified` to now; false when there is no such key. */
export async function touchObject(context: ObjectStoreContext, key: string): Promise<boolean> {
  const rows = await context.db
    .update(blobs)
    .set({ lastModified: sql`clock_timestamp()` })
    .where(rowOf(context, key))
    .returning({ key: blobs.key });
  return rows.length === 1;
}

/** Deletes `key`; nothing happens when there is none. */
export async function deleteObject(context: ObjectStoreContext, key: string): Promise<void> {
  await context.db.delete(blobs).where(rowOf(context, key));
}
