import { describeValue, mapConcurrent, type ObjectStore, StowageError } from "@stowage/core";
import { decodePageCursor, encodePageCursor } from "./feed-cursor.js";

/** Items (or threads) per page when a listing is given no `limit`. */
const DEFAULT_FEED_PAGE_LIMIT = 100;
/** Largest `limit` a listing accepts: an ObjectStore's largest page (core's README: 1,000). */
export const MAX_FEED_PAGE_LIMIT = 1000;

/** Stored objects read at once while a page is read. */
const READ_CONCURRENCY = 16;

/** Options of a paged listing. */
export interface PageOptions {
  /** The `cursor` of the previous page; omit for the first page. */
  cursor?: string;
  /** At most this many entries, 1 to {@link MAX_FEED_PAGE_LIMIT}. Default {@link DEFAULT_FEED_PAGE_LIMIT}. */
  limit?: number;
  signal?: AbortSignal;
}

function pageLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_FEED_PAGE_LIMIT;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_FEED_PAGE_LIMIT) {
    throw new StowageError(
      "INVALID_INPUT",
      `limit must be an integer from 1 to ${MAX_FEED_PAGE_LIMIT}, got ${describeValue(limit)}`,
      { details: { limit: MAX_FEED_PAGE_LIMIT } },
    );
  }
  return limit;
}

/**
 * One page of the keys under `listing`, each passed to `read` (a bounded number at once); the
 * results come back in key order, with the page cursor of the next page.
 */
export async function readListingPage<T>(
  store: ObjectStore,
  listing: string,
  { cursor, limit, signal }: PageOptions,
  read: (key: string) => Promise<T>,
): Promise<{ results: { key: string; value: T }[]; cursor: string | undefined }> {
  const page = await store.list({
    prefix: listing,
    cursor: cursor === undefined ? undefined : decodePageCursor(listing, cursor),
    limit: pageLimit(limit),
    signal,
  });
  const values = await mapConcurrent(page.items, READ_CONCURRENCY, ({ key }) => read(key), signal);
  return {
    results: page.items.map(({ key }, index) => ({ key, value: values[index] as T })),
    cursor: page.cursor === undefined ? undefined : encodePageCursor(listing, page.cursor),
  };
}
