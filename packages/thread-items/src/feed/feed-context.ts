import { describeValue, type Logger, type Notifier, type ObjectStore, StowageError } from "@stowage/core";
import type { ThreadRef } from "../log/thread-layout.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import type { FeedLayout } from "./feed-layout.js";
import type { ItemNamer } from "./item-names.js";
import type { KeyedQueue } from "./keyed-queue.js";
import { parseStoredItem } from "./stored-json.js";
import { parseThreadRecord, type ThreadFailure, type ThreadInfo } from "./thread-record.js";
import { warnFailure } from "./warn-failure.js";

/** Failed threads a `ThreadFeeds` object remembers, to refuse their posts without writing anything. */
const MAX_REMEMBERED_FAILURES = 10_000;

export const JSON_TYPE = "application/json";

/** What the operations of one `ThreadFeeds` object share (`createThreadFeeds` makes it). */
export interface FeedContext {
  store: ObjectStore;
  logger: Logger;
  layout: FeedLayout;
  notifier: Notifier;
  /** Names of this object's posted items, strictly increasing. */
  namer: ItemNamer;
  /** A thread's appends in this process, one after another. */
  appends: KeyedQueue;
  /**
   * Threads this object has seen failed, by topic. A failure is final, so a post to one of them is
   * refused before anything is written. At most {@link MAX_REMEMBERED_FAILURES}, oldest forgotten.
   */
  failedThreads: Map<string, ThreadFailure | undefined>;
  /** Whether `post` replaces secrets of a known shape (`ThreadFeedsOptions.redactSecrets`). */
  redactSecrets: boolean;
}

/** A method's options object (or `{}`), refused when it is not an object. */
export function optionsObject<T extends object>(value: T | undefined, what: string): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null) {
    throw new StowageError("INVALID_INPUT", `${what} must be an object, got ${describeValue(value)}`);
  }
  return value;
}

/** The thread's record; an unreadable one reads as active (with a warning), null when there is none. */
export async function readThread(
  ctx: FeedContext,
  thread: ThreadRef,
  signal?: AbortSignal,
): Promise<ThreadInfo | null> {
  const key = ctx.layout.indexKey(thread);
  const bytes = await ctx.store.get(key, { signal });
  if (bytes === null) return null;
  const info = parseThreadRecord(thread, bytes);
  if (typeof info !== "string") return info;
  // A damaged record must not lock the thread: it reads as active until a failure rewrites it.
  ctx.logger.warn({ key, problem: info }, "read an unreadable thread record as active");
  return { ...thread, status: "active" };
}

/** The item stored at `key`, why it is unreadable, or undefined when it is gone (deleted since it was listed or announced). */
export async function readItem(
  ctx: FeedContext,
  key: string,
  signal?: AbortSignal,
): Promise<ThreadItem | string | undefined> {
  const bytes = await ctx.store.get(key, { signal });
  return bytes === null ? undefined : parseStoredItem(bytes);
}

export function warnSkipped(ctx: FeedContext, thread: ThreadRef, key: string, problem: string): void {
  ctx.logger.warn(
    {
      jobId: thread.jobId,
      alias: thread.alias,
      key,
      problem,
    },
    "skipped an unreadable posted item",
  );
}

/** Publishes `message` on the thread's topic; a failure is logged, never thrown. */
export async function announce(ctx: FeedContext, thread: ThreadRef, message: string): Promise<void> {
  try {
    await ctx.notifier.publish(ctx.layout.topic(thread), message);
  } catch (err) {
    // The item is stored: failing the post now would make a client post it twice.
    warnFailure(ctx.logger, "could not notify subscribers; the item is posted", thread, err, { message });
  }
}

export function rememberFailure(
  ctx: FeedContext,
  thread: ThreadRef,
  failure: ThreadFailure | undefined,
): void {
  if (ctx.failedThreads.size >= MAX_REMEMBERED_FAILURES) {
    ctx.failedThreads.delete(ctx.failedThreads.keys().next().value!);
  }
  ctx.failedThreads.set(ctx.layout.topic(thread), failure);
}
