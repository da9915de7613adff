import { Buffer } from "node:buffer";
import { randomUUID } from "node:crypto";
import {
  assertSafeId,
  consoleLogger,
  createMemoryNotifier,
  describeValue,
  type Logger,
  mapConcurrent,
  type Notifier,
  type ObjectStore,
  StowageError,
  throwIfAborted,
  type Unsubscribe,
} from "@stowage/core";
import { fitToBudget } from "../budget/fit-to-budget.js";
import { assertThreadRef, localLogPathOf, type ThreadRef } from "../log/thread-layout.js";
import { MAX_ITEM_ID_LENGTH } from "../schema/item-id.js";
import { parseThreadItem } from "../schema/parse-thread-item.js";
import { sanitizeJsonStrings } from "../schema/sanitize-json-strings.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { createFeedLayout, STATUS_MESSAGE } from "./feed-layout.js";
import { createItemNamer } from "./item-names.js";
import { createKeyedQueue } from "./keyed-queue.js";
import { type PageOptions, readListingPage } from "./listing-page.js";
import { parseStoredItem } from "./stored-json.js";
import {
  parseThreadRecord,
  serializeThreadRecord,
  THREAD_FAILED,
  type ThreadFailure,
  type ThreadInfo,
} from "./thread-record.js";
import {
  createThreadSubscriptions,
  type SubscribeOptions,
  type ThreadItemListener,
} from "./thread-subscriptions.js";
import { warnFailure } from "./warn-failure.js";

/** Failed threads a `ThreadFeeds` object remembers, to refuse their posts without writing anything. */
const MAX_REMEMBERED_FAILURES = 10_000;
/** Objects `deleteJob` deletes at once. */
const DELETE_CONCURRENCY = 16;
/** Times `post` draws a new name when another writer took the one it drew (equal microsecond and writer id). */
const NAME_ATTEMPTS = 3;
const JSON_TYPE = "application/json";

/**
 * The `reason` of the CONFLICT thrown by `post` for an item whose `id` the thread already has:
 * ids are create-only, so a repeat never replaces the full payload stored under the first.
 */
export const DUPLICATE_ITEM_ID = "DUPLICATE_ITEM_ID";

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
}

/** Options of `ThreadFeeds.post`. */
export interface PostOptions {
  /**
   * Who posts: stamped as the item's `user_id`, replacing whatever the item carried, so that the
   * self-filter (`filterSelf`) can trust it. Pass the authenticated principal's id whenever the
   * item comes from a client; when absent, the item's own `user_id` is kept.
   */
  author?: string;
  signal?: AbortSignal;
}

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

function optionsObject<T extends object>(value: T | undefined, what: string): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null) {
    throw new StowageError("INVALID_INPUT", `${what} must be an object, got ${describeValue(value)}`);
  }
  return value;
}

/** The CONFLICT of a post to a failed thread. */
function threadFailed(thread: ThreadRef, failure: ThreadFailure | undefined): StowageError {
  return new StowageError(
    "CONFLICT",
    `thread ${thread.jobId}/${thread.alias} failed (${failure?.reason} at ${failure?.at}) and takes no more posts`,
    { reason: THREAD_FAILED, details: { jobId: thread.jobId, alias: thread.alias, failure } },
  );
}

function jsonBytes(value: unknown): Uint8Array {
  try {
    return Buffer.from(JSON.stringify(value));
  } catch (err) {
    throw new StowageError(
      "INVALID_INPUT",
      `thread item must be JSON-serializable: ${(err as Error).message}`,
      { cause: err },
    );
  }
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
}

/**
 * The posted-item feeds of job threads in `store` (key layout in the README). Posts from several
 * processes never overwrite each other: each fitted item is a create-only object named by its
 * post time and its writer, so every reader lists one thread in one order. Listings are paged;
 * an unreadable stored item is skipped with a warning. Live delivery goes through `notifier`: a
 * post publishes the item's name, each subscribing process reads the item from the store once.
 */
export function createThreadFeeds(options: ThreadFeedsOptions): ThreadFeeds {
  checkOptions(options);
  const { store, logger = consoleLogger } = options;
  const layout = createFeedLayout(options.prefix);
  const notifier = options.notifier ?? createMemoryNotifier();
  const ownsNotifier = options.notifier === undefined;
  const namer = createItemNamer();
  const appends = createKeyedQueue();

  async function readThread(thread: ThreadRef, signal?: AbortSignal): Promise<ThreadInfo | null> {
    const key = layout.indexKey(thread);
    const bytes = await store.get(key, { signal });
    if (bytes === null) return null;
    const info = parseThreadRecord(thread, bytes);
    if (typeof info !== "string") return info;
    // A damaged record must not lock the thread: it reads as active until a failure rewrites it.
    logger.warn({ key, problem: info }, "read an unreadable thread record as active");
    return { ...thread, status: "active" };
  }

  /** The item stored at `key`, why it is unreadable, or undefined when it is gone (deleted since it was listed or announced). */
  async function readItem(key: string, signal?: AbortSignal): Promise<ThreadItem | string | undefined> {
    const bytes = await store.get(key, { signal });
    return bytes === null ? undefined : parseStoredItem(bytes);
  }

  function warnSkipped(thread: ThreadRef, key: string, problem: string): void {
    logger.warn(
      {
        jobId: thread.jobId,
        alias: thread.alias,
        key,
        problem,
      },
      "skipped an unreadable posted item",
    );
  }

  const subscriptions = createThreadSubscriptions({
    notifier,
    layout,
    logger,
    async readItem(thread, name) {
      const key = layout.itemKey(thread, name);
      const item = await readItem(key);
      if (typeof item !== "string") return item;
      warnSkipped(thread, key, item);
      return undefined;
    },
    readThread: (thread) => readThread(thread),
  });

  async function announce(thread: ThreadRef, message: string): Promise<void> {
    try {
      await notifier.publish(layout.topic(thread), message);
    } catch (err) {
      // The item is stored: failing the post now would make a client post it twice.
      warnFailure(logger, "could not notify subscribers; the item is posted", thread, err, { message });
    }
  }

  /**
   * Threads this object has seen failed, by topic. A failure is final, so a post to one of them is
   * refused before anything is written. At most {@link MAX_REMEMBERED_FAILURES}, oldest forgotten.
   */
  const failedThreads = new Map<string, ThreadFailure | undefined>();

  function rememberFailure(thread: ThreadRef, failure: ThreadFailure | undefined): void {
    if (failedThreads.size >= MAX_REMEMBERED_FAILURES) {
      failedThreads.delete(failedThreads.keys().next().value!);
    }
    failedThreads.set(layout.topic(thread), failure);
  }

  /**
   * The thread's record, created `active` (create-only) when the thread has none yet: its first
   * post. Reads without the caller's signal: a post's objects are already stored when it asks.
   */
  async function currentRecord(thread: ThreadRef): Promise<ThreadInfo> {
    let info = await readThread(thread);
    if (info === null) {
      try {
        await store.put(layout.indexKey(thread), serializeThreadRecord({ ...thread, status: "active" }), {
          ifNoneMatch: "*",
          contentType: JSON_TYPE,
        });
        return { ...thread, status: "active" };
      } catch (err) {
        if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
      }
      info = await readThread(thread);
    }
    if (info?.status === "failed") rememberFailure(thread, info.failure);
    return info ?? { ...thread, status: "active" };
  }

  /**
   * Deletes what a post stored before it failed, so that nothing of it stays and its id may be
   * posted again: the fitted item first (when it was appended), then the full payload. A full
   * payload whose item could not be deleted is kept, since that item's markers point to it.
   */
  async function takeBack(thread: ThreadRef, itemName: string | undefined, fullKey: string): Promise<void> {
    const deleted = async (key: string) => {
      try {
        await store.delete(key);
        return true;
      } catch (err) {
        warnFailure(logger, "could not take back what a failed post stored", thread, err, { key });
        return false;
      }
    };
    if (itemName !== undefined && !(await deleted(layout.itemKey(thread, itemName)))) return;
    await deleted(fullKey);
  }

  /** Marks the thread failed by `err` (a final state, so a plain overwrite) and tells status listeners. */
  async function failThread(thread: ThreadRef, err: StowageError, itemId: string): Promise<void> {
    const failure = { code: err.code, reason: err.reason ?? err.code, at: new Date().toISOString(), itemId };
    try {
      const record = serializeThreadRecord({ ...thread, status: "failed", failure });
      await store.put(layout.indexKey(thread), record, { contentType: JSON_TYPE });
    } catch (markErr) {
      warnFailure(logger, "could not mark the thread failed", thread, markErr, { itemId });
      return;
    }
    rememberFailure(thread, failure);
    await announce(thread, STATUS_MESSAGE);
  }

  /** Stores the fitted item create-only under a fresh name; returns the name. */
  async function append(thread: ThreadRef, body: Uint8Array, signal?: AbortSignal): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const name = namer.next();
      try {
        await store.put(layout.itemKey(thread, name), body, {
          ifNoneMatch: "*",
          contentType: JSON_TYPE,
          signal,
        });
        return name;
      } catch (err) {
        if (!StowageError.is(err, "ALREADY_EXISTS") || attempt === NAME_ATTEMPTS) throw err;
      }
    }
  }

  async function post(thread: ThreadRef, item: ThreadItem, postOptions?: PostOptions): Promise<ThreadItem> {
    assertThreadRef(thread);
    const { author, signal } = optionsObject(postOptions, "post options");
    if (author !== undefined) assertSafeId(author, "author");
    if (typeof item !== "object" || item === null || Array.isArray(item)) parseThreadItem(item);
    const id: unknown = item.id === undefined ? randomUUID() : item.id;
    assertSafeId(id, "thread item id", MAX_ITEM_ID_LENGTH);
    const { id: _given, ...rest } = item;
    // Sanitized once, here: the full payload, the posted item and every reader see the same text.
    const full: ThreadItem = sanitizeJsonStrings({
      id,
      ...rest,
      ...(author === undefined ? {} : { user_id: author }),
    });
    // Fitting validates the item too (one schema check per post), before anything is stored.
    let fitted: ThreadItem | undefined;
    let tooLarge: StowageError | undefined;
    try {
      // The markers quote the design document's log path; the payload is `fullItem(thread, id)`.
      fitted = fitToBudget(full, { localLogPath: localLogPathOf(thread) });
    } catch (err) {
      if (!StowageError.is(err, "TOO_LARGE")) throw err;
      tooLarge = err;
    }
    const fullBytes = jsonBytes(full);
    const topic = layout.topic(thread);
    throwIfAborted(signal, `post to thread ${thread.jobId}/${thread.alias}`);
    if (failedThreads.has(topic)) throw threadFailed(thread, failedThreads.get(topic));

    // The full payload is durable before the fitted item is posted (design document 003), and
    // create-only: a repeated id must not replace the payload an earlier item's markers point to.
    const fullKey = layout.fullKey(thread, id);
    try {
      await store.put(fullKey, fullBytes, { ifNoneMatch: "*", contentType: JSON_TYPE, signal });
    } catch (err) {
      if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
      throw new StowageError(
        "CONFLICT",
        `thread ${thread.jobId}/${thread.alias} already has an item ${id}; an item id is used once (post without an id to get a fresh one)`,
        { reason: DUPLICATE_ITEM_ID, details: { jobId: thread.jobId, alias: thread.alias, itemId: id } },
      );
    }
    if (fitted === undefined) {
      // A thread that failed already keeps its first failure; this payload is taken back.
      const info = await currentRecord(thread).catch(async (err: unknown) => {
        await takeBack(thread, undefined, fullKey);
        throw err;
      });
      if (info.status === "failed") {
        await takeBack(thread, undefined, fullKey);
        throw threadFailed(thread, info.failure);
      }
      await failThread(thread, tooLarge!, id);
      throw tooLarge;
    }
    const body = fitted === full ? fullBytes : jsonBytes(fitted);
    let name: string | undefined;
    try {
      // Within this process a thread's appends run in turn, so its names, its objects and its
      // notifications all come in one order.
      await appends.run(topic, async () => {
        throwIfAborted(signal, `post to thread ${thread.jobId}/${thread.alias}`);
        name = await append(thread, body, signal);
        // The thread is checked once the item is stored, so that a failure recorded by another
        // post while this one was on its way is seen: nothing stays in a thread after its failure.
        const info = await currentRecord(thread);
        if (info.status === "failed") throw threadFailed(thread, info.failure);
        await announce(thread, name);
      });
    } catch (err) {
      await takeBack(thread, name, fullKey);
      throw err;
    }
    return fitted;
  }

  async function items(thread: ThreadRef, pageOptions?: PageOptions): Promise<ThreadItemPage> {
    assertThreadRef(thread);
    const options = optionsObject(pageOptions, "items options");
    const { results, cursor } = await readListingPage(
      store,
      layout.itemsPrefix(thread),
      options,
      async (key) =>
        layout.itemNameOf(thread, key) === undefined
          ? "not a posted item's key"
          : readItem(key, options.signal),
    );
    const found: ThreadItem[] = [];
    // Reported in key order, whatever order the reads finished in.
    for (const { key, value } of results) {
      if (typeof value === "string") warnSkipped(thread, key, value);
      else if (value !== undefined) found.push(value);
    }
    return { items: found, cursor };
  }

  async function threads(listOptions?: ThreadListOptions): Promise<ThreadPage> {
    const { jobId, ...options } = optionsObject(listOptions, "threads options");
    if (jobId !== undefined) assertSafeId(jobId, "jobId");
    const { results, cursor } = await readListingPage(
      store,
      layout.indexPrefix(jobId),
      options,
      async (key) => {
        const thread = layout.threadOfIndexKey(key);
        return thread === undefined ? null : readThread(thread, options.signal);
      },
    );
    return { threads: results.map(({ value }) => value).filter((info) => info !== null), cursor };
  }

  async function deleteJob(jobId: string, deleteOptions?: { signal?: AbortSignal }): Promise<number> {
    assertSafeId(jobId, "jobId");
    const { signal } = optionsObject(deleteOptions, "deleteJob options");
    let threadCount = 0;
    for (const prefix of layout.jobPrefixes(jobId)) {
      const keys: string[] = [];
      for await (const item of store.iterate({ prefix, ...(signal ? { signal } : {}) })) keys.push(item.key);
      if (prefix === layout.indexPrefix(jobId)) threadCount = keys.length;
      await mapConcurrent(
        keys,
        DELETE_CONCURRENCY,
        (key) => store.delete(key, signal ? { signal } : {}),
        signal,
      );
    }
    // A failure remembered for a deleted thread would refuse the first post of a new one.
    const jobTopics = layout.topic({ jobId, alias: "" });
    for (const topic of [...failedThreads.keys()])
      if (topic.startsWith(jobTopics)) failedThreads.delete(topic);
    return threadCount;
  }

  return {
    post,
    items,
    deleteJob,
    async fullItem(thread, itemId, readOptions) {
      assertThreadRef(thread);
      assertSafeId(itemId, "thread item id", MAX_ITEM_ID_LENGTH);
      const { signal } = optionsObject(readOptions, "fullItem options");
      const key = layout.fullKey(thread, itemId);
      const bytes = await store.get(key, { signal });
      if (bytes === null) return null;
      const full = parseStoredItem(bytes);
      if (typeof full === "string") {
        throw new StowageError("INTEGRITY", `the full payload of item ${itemId} is unreadable: ${full}`, {
          details: { key },
        });
      }
      return full;
    },
    async streamFullItem(thread, itemId, readOptions) {
      assertThreadRef(thread);
      assertSafeId(itemId, "thread item id", MAX_ITEM_ID_LENGTH);
      const { signal } = optionsObject(readOptions, "streamFullItem options");
      return store.stream(layout.fullKey(thread, itemId), { signal });
    },
    async thread(thread, readOptions) {
      assertThreadRef(thread);
      return readThread(thread, optionsObject(readOptions, "thread options").signal);
    },
    threads,
    async subscribe(thread, listener, subscribeOptions) {
      assertThreadRef(thread);
      if (typeof listener !== "function") {
        throw new StowageError(
          "INVALID_INPUT",
          `listener must be a function, got ${describeValue(listener)}`,
        );
      }
      const { onStatus } = optionsObject(subscribeOptions, "subscribe options");
      if (onStatus !== undefined && typeof onStatus !== "function") {
        throw new StowageError(
          "INVALID_INPUT",
          `onStatus must be a function, got ${describeValue(onStatus)}`,
        );
      }
      return subscriptions.subscribe(thread, listener, { onStatus });
    },
    async close() {
      await subscriptions.close();
      if (ownsNotifier) await notifier.close();
    },
    async [Symbol.asyncDispose]() {
      await this.close();
    },
  };
}
