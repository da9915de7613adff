import { Buffer } from "node:buffer";
import { pushAll, StowageError } from "@stowage/core";
import type { ThreadFeeds, ThreadItem } from "@stowage/thread-items";

/** Items in one page of a `thread://` read when the URI gives no `limit`. */
export const DEFAULT_THREAD_PAGE_ITEMS = 50;
/** Most items one `thread://` read may ask for. */
export const MAX_THREAD_PAGE_ITEMS = 100;
/**
 * Items fetched per step while a page is filled: what is held beyond the page is at most this
 * many items (each fitted to the feeds' 350,000-byte budget).
 */
const FETCH_ITEMS = 16;
/** Bytes kept aside for the thread's record and the `next` URI around the items. */
const ENVELOPE_BYTES = 8 * 1024;

type ThreadRef = Parameters<ThreadFeeds["items"]>[0];

const sizeOf = (item: ThreadItem) => Buffer.byteLength(JSON.stringify(item)) + 1;

/**
 * Up to `limit` items of a thread from `cursor`, no more than fit `maxBytes` of JSON (always at
 * least one, so that paging advances: a fitted item is far below a resource read's bound), and
 * the cursor after the last one returned. The feeds' cursors are per listing, not per item, so
 * when only part of a fetched step fits, that part is listed again to get the cursor just after it.
 */
export async function readThreadPage(
  threads: ThreadFeeds,
  thread: ThreadRef,
  options: { cursor: string | undefined; limit: number; maxBytes: number; signal?: AbortSignal | undefined },
): Promise<{ items: ThreadItem[]; cursor: string | undefined }> {
  const { limit, maxBytes, signal } = options;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_THREAD_PAGE_ITEMS) {
    throw new StowageError(
      "INVALID_INPUT",
      `a thread page has 1 to ${MAX_THREAD_PAGE_ITEMS} items, got limit ${limit}`,
      { reason: "INVALID_READ_OPTION" },
    );
  }
  const items: ThreadItem[] = [];
  let bytes = ENVELOPE_BYTES;
  let cursor = options.cursor;
  const list = (count: number) =>
    threads.items(thread, {
      limit: count,
      ...(cursor === undefined ? {} : { cursor }),
      ...(signal ? { signal } : {}),
    });
  while (items.length < limit) {
    const step = await list(Math.min(FETCH_ITEMS, limit - items.length));
    let fitting = 0;
    for (const item of step.items) {
      const size = sizeOf(item);
      if (bytes + size > maxBytes && items.length + fitting > 0) break;
      bytes += size;
      fitting++;
    }
    if (fitting === step.items.length) {
      pushAll(items, step.items);
      cursor = step.cursor;
      if (cursor === undefined) break;
      continue;
    }
    if (fitting > 0) {
      // The same listing cut after the items that fit (a skipped unreadable item only makes it shorter).
      const part = await list(fitting);
      pushAll(items, part.items);
      cursor = part.cursor;
    }
    break;
  }
  return { items, cursor };
}
