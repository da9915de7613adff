import {
  type DriverListOptions,
  describeValue,
  type ListPage,
  type ObjectInfo,
  StowageError,
} from "@stowage/core";
import { and, eq, gt, gte, sql } from "drizzle-orm";
import { type ObjectStoreContext, rowOf } from "./object-store-context.js";
import { blobs } from "./schema.js";

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

/** Size, time and content type of `key`, or null. */
export async function headObject(context: ObjectStoreContext, key: string): Promise<ObjectInfo | null> {
  const [row] = await context.db
    .select({ size: blobs.size, lastModified: blobs.lastModified, contentType: blobs.contentType })
    .from(blobs)
    .where(rowOf(context, key));
  if (!row) return null;
  return {
    size: row.size,
    lastModified: row.lastModified,
    ...(row.contentType === null ? {} : { contentType: row.contentType }),
  };
}

/** One page of the keys under `prefix`, in byte order, after the key the cursor names. */
export async function listObjects(
  context: ObjectStoreContext,
  { prefix, cursor, limit }: DriverListOptions,
): Promise<ListPage> {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const rows = await context.db
    .select({ key: blobs.key, size: blobs.size, lastModified: blobs.lastModified })
    .from(blobs)
    .where(
      and(
        eq(blobs.namespace, context.namespace),
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
}
