import { assertSafeKey, describeValue, isSafeId, StowageError, sha256Hex } from "@stowage/core";
import type { ThreadRef } from "../log/thread-layout.js";

/** Key prefix of the feeds when `createThreadFeeds` is given none. */
const DEFAULT_FEED_PREFIX = "threads";

/**
 * A posted item's name: `<post time, 16 digits of microseconds since the epoch>-<8 hex digits of
 * its writer>`. Fixed width, so that names sort as their times do.
 */
const ITEM_NAME_PATTERN = /^\d{16}-[0-9a-f]{8}$/;
/**
 * Items live in buckets named by the first 7 digits of their name (1,000 seconds each), so that a
 * directory-backed store never holds a long thread in one directory and a listing that resumes
 * skips whole buckets. A bucket is a prefix of every name in it, so key order is name order.
 */
const BUCKET_DIGITS = 7;

/** The notifier message that says "the thread's record changed" (an item name always starts with a digit). */
export const STATUS_MESSAGE = "status";

/** True when `name` is an item name this package writes. */
export function isItemName(name: unknown): name is string {
  return typeof name === "string" && ITEM_NAME_PATTERN.test(name);
}

/**
 * Every key and topic of the feeds under one prefix:
 *
 * ```
 * <prefix>/index/<jobId>/<alias>                   the thread's record (JSON); create-only on the first post, overwritten once, to failed
 * <prefix>/full/<jobId>/<alias>/<itemId>           an item's full payload (JSON), written create-only before it is posted
 * <prefix>/items/<jobId>/<alias>/<bucket>/<name>   a posted item, fitted to the budget (JSON); create-only
 * ```
 */
export interface FeedLayout {
  readonly prefix: string;
  /** The key of the thread's record. */
  indexKey(thread: ThreadRef): string;
  /** The listing prefix of every thread record, or of one job's. */
  indexPrefix(jobId?: string): string;
  /** The listing prefixes of everything one job's threads store: records first, then items, then full payloads. */
  jobPrefixes(jobId: string): string[];
  /** The thread a listed record key names, or undefined for a key that is not one. */
  threadOfIndexKey(key: string): ThreadRef | undefined;
  /** The key of an item's full payload. */
  fullKey(thread: ThreadRef, itemId: string): string;
  /** The listing prefix of the thread's posted items. */
  itemsPrefix(thread: ThreadRef): string;
  /** The key of the posted item called `name` (see {@link isItemName}). */
  itemKey(thread: ThreadRef, name: string): string;
  /** The name of a listed posted-item key, or undefined for a key that is not one. */
  itemNameOf(thread: ThreadRef, key: string): string | undefined;
  /**
   * The notifier topic of the thread: `thread-items:<first 16 hex digits of sha256(prefix)>:<jobId>/<alias>`,
   * short enough for any prefix and distinct for feeds under different prefixes.
   */
  topic(thread: ThreadRef): string;
}

/** The layout under `prefix` (a safe key such as `threads` or `tenants/acme/threads`). */
export function createFeedLayout(prefix: unknown = DEFAULT_FEED_PREFIX): FeedLayout {
  assertSafeKey(prefix, "prefix");
  const index = `${prefix}/index/`;
  const full = `${prefix}/full/`;
  const items = `${prefix}/items/`;
  const topicPrefix = `thread-items:${sha256Hex(prefix).slice(0, 16)}:`;
  const itemsPrefix = ({ jobId, alias }: ThreadRef) => `${items}${jobId}/${alias}/`;

  return {
    prefix,
    indexKey: ({ jobId, alias }) => `${index}${jobId}/${alias}`,
    indexPrefix: (jobId) => (jobId === undefined ? index : `${index}${jobId}/`),
    jobPrefixes: (jobId) => [`${index}${jobId}/`, `${items}${jobId}/`, `${full}${jobId}/`],
    threadOfIndexKey(key) {
      const [jobId, alias, ...rest] = key.slice(index.length).split("/");
      return key.startsWith(index) && rest.length === 0 && isSafeId(jobId) && isSafeId(alias)
        ? { jobId, alias }
        : undefined;
    },
    fullKey: ({ jobId, alias }, itemId) => `${full}${jobId}/${alias}/${itemId}`,
    itemsPrefix,
    itemKey(thread, name) {
      if (!isItemName(name)) {
        throw new StowageError("INVALID_INPUT", `not a posted item name: ${describeValue(name)}`);
      }
      return `${itemsPrefix(thread)}${name.slice(0, BUCKET_DIGITS)}/${name}`;
    },
    itemNameOf(thread, key) {
      const base = itemsPrefix(thread);
      const [bucket, name, ...rest] = key.slice(base.length).split("/");
      return key.startsWith(base) &&
        rest.length === 0 &&
        isItemName(name) &&
        bucket === name.slice(0, BUCKET_DIGITS)
        ? name
        : undefined;
    },
    topic: ({ jobId, alias }) => `${topicPrefix}${jobId}/${alias}`,
  };
}
