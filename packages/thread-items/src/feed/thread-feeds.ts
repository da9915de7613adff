import {
  consoleLogger,
  createMemoryNotifier,
  describeValue,
  type Logger,
  type Notifier,
  type ObjectStore,
  StowageError,
  type Unsubscribe,
} from "@stowage/core";
import { assertThreadRef, type ThreadRef } from "../log/thread-layout.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { type FeedContext, optionsObject, readItem, readThread, warnSkipped } from "./feed-context.js";
import { deleteJob } from "./feed-delete.js";
import { createFeedLayout } from "./feed-layout.js";
import {
  fullItem,
  itemsPage,
  streamFullItem,
  type ThreadItemPage,
  type ThreadListOptions,
  type ThreadPage,
  threadInfo,
  threadsPage,
} from "./feed-pages.js";
import { type PostOptions, post } from "./feed-post.js";
import { createItemNamer } from "./item-names.js";
import { createKeyedQueue } from "./keyed-queue.js";
import type { PageOptions } from "./listing-page.js";
import type { ThreadInfo } from "./thread-record.js";
import {
  createThreadSubscriptions,
  type SubscribeOptions,
  type ThreadItemListener,
  type ThreadSubscriptions,
} from "./thread-subscriptions.js";

/** Options of `createThreadFeeds`. */
export interface ThreadFeedsOptions {
  /**
   * Where threads, posted items and full payloads live: any ObjectStore (PostgreSQL or S3 for
   * several processes, the file system when embedded). Its create-only puts keep concurrent
   * writers from overwriting each other.
   */
  store: ObjectStore;
  /** Key prefix of everything the feeds store (a safe key). Default `threads`. */
  prefix?: string;
  /**
   * Live delivery: `post` publishes each item's name on the thread's topic, `subscribe` listens.
   * A shared notifier (PostgreSQL LISTEN/NOTIFY) reaches subscribers in every process. Default: a
   * memory notifier, this process only (closed by `close`).
   */
  notifier?: Notifier;
  /** Receives skipped stored objects, failed notifications and listeners that threw. Default `consoleLogger`. */
  logger?: Logger;
  /**
   * Replace secrets of a known shape (cloud and API keys, tokens, private keys, JWTs, `.env`-style
   * assignments) in every posted item and its full payload with `[REDACTED:<kind>]`, recording
   * each in the item's `redactions` (kind and position only): a thread is shared, the worker's own
   * log keeps them. Default `true`; `false` for a deployment whose threads are never shared.
   */
  redactSecrets?: boolean;
}

/**
 * The posted-item feeds of job threads over an ObjectStore, shared by every process on the same
 * store and notifier.
 */
export interface ThreadFeeds {
  /**
   * Stamps `author`, sanitizes every string of the item (core's `sanitizeText`), stores the full
   * item create-only under its id, fits it to the budget and appends the fitted item to the
   * thread (create-only), announces it and returns it (with its `id`). An id the thread already
   * has is refused (CONFLICT, reason `DUPLICATE_ITEM_ID`). An item that cannot be fitted fails the
   * thread (TOO_LARGE, reason `THREAD_ITEM_TOO_LARGE`); a failed thread refuses posts (CONFLICT,
   * reason `THREAD_FAILED`), also a post that was under way when another one failed it.
   */
  post(thread: ThreadRef, item: ThreadItem, options?: PostOptions): Promise<ThreadItem>;
  /** One page of the thread's posted items, oldest first (none for a thread never posted to). */
  items(thread: ThreadRef, options?: PageOptions): Promise<ThreadItemPage>;
  /** The full, untruncated item stored before it was posted, or null. */
  fullItem(thread: ThreadRef, itemId: string, options?: { signal?: AbortSignal }): Promise<ThreadItem | null>;
  /**
   * The same full item as the JSON bytes `post` stored, streamed from the store (never held
   * whole in memory), or null. Not parsed: a damaged object streams as it is.
   */
  streamFullItem(
    thread: ThreadRef,
    itemId: string,
    options?: { signal?: AbortSignal },
  ): Promise<ReadableStream<Uint8Array> | null>;
  /** The thread's status, or null for a thread never posted to. */
  thread(thread: ThreadRef, options?: { signal?: AbortSignal }): Promise<ThreadInfo | null>;
  /** One page of the threads posted to (all jobs, or one). */
  threads(options?: ThreadListOptions): Promise<ThreadPage>;
  /**
   * Deletes every thread of a job: records, posted items and full payloads (records first, so a
   * deletion cut short leaves no thread that lists). Returns how many threads there were. Meant
   * for a job whose writers have stopped: a post that races the deletion may leave its item.
   */
  deleteJob(jobId: string, options?: { signal?: AbortSignal }): Promise<number>;
  /**
   * Calls `listener` with every item posted to the thread from now on by any process sharing the
   * store and the notifier; resolves once listening, with the unsubscribe.
   */
  subscribe(
    thread: ThreadRef,
    listener: ThreadItemListener,
    options?: SubscribeOptions,
  ): Promise<Unsubscribe>;
  /** Stops this object's subscriptions, and closes the notifier when the feeds made it. */
  close(): Promise<void>;
  /** `close()`, for `await using feeds = createThreadFeeds(…)`. */
  [Symbol.asyncDispose](): Promise<void>;
}

function checkOptions(options: ThreadFeedsOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new StowageError(
      "INVALID_INPUT",
      `createThreadFeeds options must be an object, got ${describeValue(options)}`,
    );
  }
  const { store, notifier, logger } = options;
  if (
    typeof store?.put !== "function" ||
    typeof store.get !== "function" ||
    typeof store.list !== "function"
  ) {
    throw new StowageError("INVALID_INPUT", `store must be an ObjectStore, got ${describeValue(store)}`);
  }
  if (
    notifier !== undefined &&
    (typeof notifier?.publish !== "function" || typeof notifier.subscribe !== "function")
  ) {
    throw new StowageError("INVALID_INPUT", `notifier must be a Notifier, got ${describeValue(notifier)}`);
  }
  if (logger !== undefined && typeof logger?.warn !== "function") {
    throw new StowageError("INVALID_INPUT", `logger must have a warn method, got ${describeValue(logger)}`);
  }
  if (options.redactSecrets !== undefined && typeof options.redactSecrets !== "boolean") {
    throw new StowageError(
      "INVALID_INPUT",
      `redactSecrets must be true or false, got ${describeValue(options.redactSecrets)}`,
    );
  }
}

/** The live side, reading each announced item from the store once. */
function subscriptionsOf(ctx: FeedContext): ThreadSubscriptions {
  return createThreadSubscriptions({
    notifier: ctx.notifier,
    layout: ctx.layout,
    logger: ctx.logger,
    async readItem(thread, name) {
      const key = ctx.layout.itemKey(thread, name);
      const item = await readItem(ctx, key);
      if (typeof item !== "string") return item;
      warnSkipped(ctx, thread, key, item);
      return undefined;
    },
    readThread: (thread) => readThread(ctx, thread),
  });
}

async function subscribe(
  subscriptions: ThreadSubscriptions,
  thread: ThreadRef,
  listener: ThreadItemListener,
  subscribeOptions: SubscribeOptions | undefined,
): Promise<Unsubscribe> {
  assertThreadRef(thread);
  if (typeof listener !== "function") {
    throw new StowageError("INVALID_INPUT", `listener must be a function, got ${describeValue(listener)}`);
  }
  const { onStatus } = optionsObject(subscribeOptions, "subscribe options");
  if (onStatus !== undefined && typeof onStatus !== "function") {
    throw new StowageError("INVALID_INPUT", `onStatus must be a function, got ${describeValue(onStatus)}`);
  }
  return subscriptions.subscribe(thread, listener, { onStatus });
}

/**
 * The posted-item feeds of job threads in `store` (key layout in the README). Posts from several
 * processes never overwrite each other: each fitted item is a create-only object named by its
 * post time and its writer, so every reader lists one thread in one order. Listings are paged;
 * an unreadable stored item is skipped with a warning. Live delivery goes through `notifier`: a
 * post publishes the item's name, each subscribing process reads the item from the store once.
 * The operations are module-level functions over one {@link FeedContext} (`feed-post.ts`,
 * `feed-pages.ts`, `feed-delete.ts`); this only assembles them.
 */
export function createThreadFeeds(options: ThreadFeedsOptions): ThreadFeeds {
  checkOptions(options);
  const ownsNotifier = options.notifier === undefined;
  const ctx: FeedContext = {
    store: options.store,
    logger: options.logger ?? consoleLogger,
    layout: createFeedLayout(options.prefix),
    notifier: options.notifier ?? createMemoryNotifier(),
    namer: createItemNamer(),
    appends: createKeyedQueue(),
    failedThreads: new Map(),
    redactSecrets: options.redactSecrets ?? true,
  };
  const subscriptions = subscriptionsOf(ctx);
  return {
    post: (thread, item, postOptions) => post(ctx, thread, item, postOptions),
    items: (thread, pageOptions) => itemsPage(ctx, thread, pageOptions),
    fullItem: (thread, itemId, readOptions) => fullItem(ctx, thread, itemId, readOptions),
    streamFullItem: (thread, itemId, readOptions) => streamFullItem(ctx, thread, itemId, readOptions),
    thread: (thread, readOptions) => threadInfo(ctx, thread, readOptions),
    threads: (listOptions) => threadsPage(ctx, listOptions),
    deleteJob: (jobId, deleteOptions) => deleteJob(ctx, jobId, deleteOptions),
    subscribe: (thread, listener, subscribeOptions) =>
      subscribe(subscriptions, thread, listener, subscribeOptions),
    async close() {
      await subscriptions.close();
      if (ownsNotifier) await ctx.notifier.close();
    },
    async [Symbol.asyncDispose]() {
      await this.close();
    },
  };
}
