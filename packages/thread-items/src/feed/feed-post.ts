import { randomUUID } from "node:crypto";
import { assertSafeId, nextTurn, runInSlices, StowageError, throwIfAborted } from "@stowage/core";
import { fitToBudget } from "../budget/fit-to-budget.js";
import { assertThreadRef, localLogPathOf, type ThreadRef } from "../log/thread-layout.js";
import { redactSecretsSteps } from "../redact/redact-secrets.js";
import { MAX_ITEM_ID_LENGTH } from "../schema/item-id.js";
import { parseThreadItem } from "../schema/parse-thread-item.js";
import { sanitizeJsonStrings } from "../schema/sanitize-json-strings.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import {
  announce,
  type FeedContext,
  JSON_TYPE,
  optionsObject,
  readThread,
  rememberFailure,
} from "./feed-context.js";
import { STATUS_MESSAGE } from "./feed-layout.js";
import { jsonBytes } from "./json-bytes.js";
import {
  serializeThreadRecord,
  THREAD_FAILED,
  type ThreadFailure,
  type ThreadInfo,
} from "./thread-record.js";
import { warnFailure } from "./warn-failure.js";

/** Times `post` draws a new name when another writer took the one it drew (equal microsecond and writer id). */
const NAME_ATTEMPTS = 3;

/**
 * The `reason` of the CONFLICT thrown by `post` for an item whose `id` the thread already has:
 * ids are create-only, so a repeat never replaces the full payload stored under the first.
 */
export const DUPLICATE_ITEM_ID = "DUPLICATE_ITEM_ID";

/** Options of `ThreadFeeds.post`. */
export interface PostOptions {
  /**
   * Who posts: stamped as the item's `user_id`, replacing whatever the item carried, so that a
   * reader can trust it to drop its own posts. Pass the authenticated principal's id whenever the
   * item comes from a client; when absent, the item's own `user_id` is kept.
   */
  author?: string;
  signal?: AbortSignal;
}

/** The CONFLICT of a post to a failed thread. */
function threadFailed(thread: ThreadRef, failure: ThreadFailure | undefined): StowageError {
  return new StowageError(
    "CONFLICT",
    `thread ${thread.jobId}/${thread.alias} failed (${failure?.reason} at ${failure?.at}) and takes no more posts`,
    { reason: THREAD_FAILED, details: { jobId: thread.jobId, alias: thread.alias, failure } },
  );
}

/**
 * The thread's record, created `active` (create-only) when the thread has none yet: its first
 * post. Reads without the caller's signal: a post's objects are already stored when it asks.
 */
async function currentRecord(ctx: FeedContext, thread: ThreadRef): Promise<ThreadInfo> {
  let info = await readThread(ctx, thread);
  if (info === null) {
    try {
      await ctx.store.put(
        ctx.layout.indexKey(thread),
        serializeThreadRecord({ ...thread, status: "active" }),
        { ifNoneMatch: "*", contentType: JSON_TYPE },
      );
      return { ...thread, status: "active" };
    } catch (err) {
      if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
    }
    info = await readThread(ctx, thread);
  }
  if (info?.status === "failed") rememberFailure(ctx, thread, info.failure);
  return info ?? { ...thread, status: "active" };
}

/**
 * Deletes what a post stored before it failed, so that nothing of it stays and its id may be
 * posted again: the fitted item first (when it was appended), then the full payload. A full
 * payload whose item could not be deleted is kept, since that item's markers point to it.
 */
async function takeBack(
  ctx: FeedContext,
  thread: ThreadRef,
  itemName: string | undefined,
  fullKey: string,
): Promise<void> {
  const deleted = async (key: string) => {
    try {
      await ctx.store.delete(key);
      return true;
    } catch (err) {
      warnFailure(ctx.logger, "could not take back what a failed post stored", thread, err, { key });
      return false;
    }
  };
  if (itemName !== undefined && !(await deleted(ctx.layout.itemKey(thread, itemName)))) return;
  await deleted(fullKey);
}

/** Marks the thread failed by `err` (a final state, so a plain overwrite) and tells status listeners. */
async function failThread(
  ctx: FeedContext,
  thread: ThreadRef,
  err: StowageError,
  itemId: string,
): Promise<void> {
  const failure = { code: err.code, reason: err.reason ?? err.code, at: new Date().toISOString(), itemId };
  try {
    const record = serializeThreadRecord({ ...thread, status: "failed", failure });
    await ctx.store.put(ctx.layout.indexKey(thread), record, { contentType: JSON_TYPE });
  } catch (markErr) {
    warnFailure(ctx.logger, "could not mark the thread failed", thread, markErr, { itemId });
    return;
  }
  rememberFailure(ctx, thread, failure);
  await announce(ctx, thread, STATUS_MESSAGE);
}

/** Stores the fitted item create-only under a fresh name; returns the name. */
async function append(
  ctx: FeedContext,
  thread: ThreadRef,
  body: Uint8Array,
  signal?: AbortSignal,
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const name = ctx.namer.next();
    try {
      await ctx.store.put(ctx.layout.itemKey(thread, name), body, {
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

/**
 * The item as stored in full: its id (a fresh one when it has none), its author, every string
 * sanitized and, unless the feeds were told not to, every secret of a known shape redacted (in
 * slices that let the event loop go on: an item may be 16 MiB of text).
 */
async function fullItemOf(
  ctx: FeedContext,
  thread: ThreadRef,
  item: ThreadItem,
  options: { author: string | undefined; signal: AbortSignal | undefined },
): Promise<ThreadItem & { id: string }> {
  if (typeof item !== "object" || item === null || Array.isArray(item)) parseThreadItem(item);
  const id: unknown = item.id === undefined ? randomUUID() : item.id;
  assertSafeId(id, "thread item id", MAX_ITEM_ID_LENGTH);
  const { id: _given, redactions: _claimed, redactions_omitted: _claimedOmitted, ...rest } = item;
  // Sanitized and redacted once, here: the full payload, the posted item and every reader see the
  // same text. A thread is shared (document 003); the worker's own log keeps what was redacted.
  const clean = sanitizeJsonStrings(rest);
  const { value, redactions, omitted } = ctx.redactSecrets
    ? await runInSlices(redactSecretsSteps(clean), {
        signal: options.signal,
        what: `post to thread ${thread.jobId}/${thread.alias}`,
      })
    : { value: clean, redactions: [], omitted: 0 };
  return {
    id,
    ...value,
    ...(redactions.length > 0 ? { redactions } : {}),
    ...(omitted > 0 ? { redactions_omitted: omitted } : {}),
    ...(options.author === undefined ? {} : { user_id: options.author }),
  } as ThreadItem & { id: string };
}

/**
 * An item over the budget even when cut: the thread fails with it (its full payload stays, for
 * `fullItem`), unless it failed already, which keeps its first failure and takes this payload back.
 */
async function refuseTooLarge(
  ctx: FeedContext,
  thread: ThreadRef,
  tooLarge: StowageError,
  id: string,
  fullKey: string,
): Promise<never> {
  const info = await currentRecord(ctx, thread).catch(async (err: unknown) => {
    await takeBack(ctx, thread, undefined, fullKey);
    throw err;
  });
  if (info.status === "failed") {
    await takeBack(ctx, thread, undefined, fullKey);
    throw threadFailed(thread, info.failure);
  }
  await failThread(ctx, thread, tooLarge, id);
  throw tooLarge;
}

/** `ThreadFeeds.post` (the steps are in the interface's TSDoc and the README). */
export async function post(
  ctx: FeedContext,
  thread: ThreadRef,
  item: ThreadItem,
  postOptions?: PostOptions,
): Promise<ThreadItem> {
  assertThreadRef(thread);
  const { author, signal } = optionsObject(postOptions, "post options");
  if (author !== undefined) assertSafeId(author, "author");
  const full = await fullItemOf(ctx, thread, item, { author, signal });
  const id = full.id;
  // A turn of the event loop between the costly steps of a large item (redacting, fitting,
  // serializing, encoding 16 MiB take tens of milliseconds each), so that no request waits for all.
  await nextTurn();
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
  await nextTurn();
  const fullBytes = await jsonBytes(full);
  const topic = ctx.layout.topic(thread);
  throwIfAborted(signal, `post to thread ${thread.jobId}/${thread.alias}`);
  if (ctx.failedThreads.has(topic)) throw threadFailed(thread, ctx.failedThreads.get(topic));

  // The full payload is durable before the fitted item is posted (design document 003), and
  // create-only: a repeated id must not replace the payload an earlier item's markers point to.
  const fullKey = ctx.layout.fullKey(thread, id);
  try {
    await ctx.store.put(fullKey, fullBytes, { ifNoneMatch: "*", contentType: JSON_TYPE, signal });
  } catch (err) {
    if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
    throw new StowageError(
      "CONFLICT",
      `thread ${thread.jobId}/${thread.alias} already has an item ${id}; an item id is used once (post without an id to get a fresh one)`,
      { reason: DUPLICATE_ITEM_ID, details: { jobId: thread.jobId, alias: thread.alias, itemId: id } },
    );
  }
  if (fitted === undefined) return refuseTooLarge(ctx, thread, tooLarge!, id, fullKey);
  const body = fitted === full ? fullBytes : await jsonBytes(fitted);
  let name: string | undefined;
  try {
    // Within this process a thread's appends run in turn, so its names, its objects and its
    // notifications all come in one order.
    await ctx.appends.run(topic, async () => {
      throwIfAborted(signal, `post to thread ${thread.jobId}/${thread.alias}`);
      name = await append(ctx, thread, body, signal);
      // The thread is checked once the item is stored, so that a failure recorded by another
      // post while this one was on its way is seen: nothing stays in a thread after its failure.
      const info = await currentRecord(ctx, thread);
      if (info.status === "failed") throw threadFailed(thread, info.failure);
      await announce(ctx, thread, name);
    });
  } catch (err) {
    await takeBack(ctx, thread, name, fullKey);
    throw err;
  }
  return fitted;
}
