import { assertSafeId, StowageError } from "@stowage/core";
import { assertThreadRef, type ThreadRef } from "../log/thread-layout.js";
import { MAX_ITEM_ID_LENGTH } from "../schema/item-id.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { type FeedContext, optionsObject, readItem, readThread, warnSkipped } from "./feed-context.js";
import { type PageOptions, readListingPage } from "./listing-page.js";
import { parseStoredItem } from "./stored-json.js";
import type { ThreadInfo } from "./thread-record.js";

/** Options of `ThreadFeeds.threads`. */
export interface ThreadListOptions extends PageOptions {
  /** Only this job's threads. */
  jobId?: string;
}

/** One page of a thread's posted items. */
export interface ThreadItemPage {
  /** Oldest first. May hold fewer than `limit` items (unreadable ones are skipped) while `cursor` is set. */
  items: ThreadItem[];
  /** Pass back for the next page; `undefined` on the last page. */
  cursor: string | undefined;
}

/** One page of threads. */
export interface ThreadPage {
  /** In key order: `<jobId>/<alias>` compared as UTF-8 bytes. */
  threads: ThreadInfo[];
  /** Pass back for the next page; `undefined` on the last page. */
  cursor: string | undefined;
}

/** `ThreadFeeds.items`: one page of the thread's posted items, unreadable ones skipped with a warning. */
export async function itemsPage(
  ctx: FeedContext,
  thread: ThreadRef,
  pageOptions?: PageOptions,
): Promise<ThreadItemPage> {
  assertThreadRef(thread);
  const options = optionsObject(pageOptions, "items options");
  const { results, cursor } = await readListingPage(
    ctx.store,
    ctx.layout.itemsPrefix(thread),
    options,
    async (key) =>
      ctx.layout.itemNameOf(thread, key) === undefined
        ? "not a posted item's key"
        : readItem(ctx, key, options.signal),
  );
  const found: ThreadItem[] = [];
  // Reported in key order, whatever order the reads finished in.
  for (const { key, value } of results) {
    if (typeof value === "string") warnSkipped(ctx, thread, key, value);
    else if (value !== undefined) found.push(value);
  }
  return { items: found, cursor };
}

/** `ThreadFeeds.threads`: one page of thread records (all jobs, or one job's). */
export async function threadsPage(ctx: FeedContext, listOptions?: ThreadListOptions): Promise<ThreadPage> {
  const { jobId, ...options } = optionsObject(listOptions, "threads options");
  if (jobId !== undefined) assertSafeId(jobId, "jobId");
  const { results, cursor } = await readListingPage(
    ctx.store,
    ctx.layout.indexPrefix(jobId),
    options,
    async (key) => {
      const thread = ctx.layout.threadOfIndexKey(key);
      return thread === undefined ? null : readThread(ctx, thread, options.signal);
    },
  );
  return { threads: results.map(({ value }) => value).filter((info) => info !== null), cursor };
}

/** `ThreadFeeds.thread`: the thread's record, or null for a thread never posted to. */
export async function threadInfo(
  ctx: FeedContext,
  thread: ThreadRef,
  readOptions?: { signal?: AbortSignal },
): Promise<ThreadInfo | null> {
  assertThreadRef(thread);
  return readThread(ctx, thread, optionsObject(readOptions, "thread options").signal);
}

/** `ThreadFeeds.fullItem`: the full item stored before it was posted; INTEGRITY when it is unreadable. */
export async function fullItem(
  ctx: FeedContext,
  thread: ThreadRef,
  itemId: string,
  readOptions?: { signal?: AbortSignal },
): Promise<ThreadItem | null> {
  assertThreadRef(thread);
  assertSafeId(itemId, "thread item id", MAX_ITEM_ID_LENGTH);
  const { signal } = optionsObject(readOptions, "fullItem options");
  const key = ctx.layout.fullKey(thread, itemId);
  const bytes = await ctx.store.get(key, { signal });
  if (bytes === null) return null;
  const full = parseStoredItem(bytes);
  if (typeof full === "string") {
    throw new StowageError("INTEGRITY", `the full payload of item ${itemId} is unreadable: ${full}`, {
      details: { key },
    });
  }
  return full;
}

/** `ThreadFeeds.streamFullItem`: the full item's stored JSON bytes as a stream, unparsed. */
export async function streamFullItem(
  ctx: FeedContext,
  thread: ThreadRef,
  itemId: string,
  readOptions?: { signal?: AbortSignal },
): Promise<ReadableStream<Uint8Array> | null> {
  assertThreadRef(thread);
  assertSafeId(itemId, "thread item id", MAX_ITEM_ID_LENGTH);
  const { signal } = optionsObject(readOptions, "streamFullItem options");
  return ctx.store.stream(ctx.layout.fullKey(thread, itemId), { signal });
}
