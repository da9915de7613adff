import { describeValue, keyProblem, type ObjectStore, StowageError, trashDaysOf } from "@stowage/core";
import { entryPayloadsFrom, type SessionStorePayloadOptions } from "./entry-payloads.js";
import { PART_NAME_LENGTH } from "./part-object.js";
import { appendEntries } from "./session-store-append.js";
import { compactTranscript } from "./session-store-compact.js";
import type { SessionStoreContext } from "./session-store-context.js";
import { deleteTranscript } from "./session-store-delete.js";
import { MAX_PROJECT_KEY_LENGTH, MAX_SUBPATH_BYTES } from "./session-store-key.js";
import { listProjectSessions, listProjectSummaries, listTranscriptSubkeys } from "./session-store-list.js";
import { loadTranscript } from "./session-store-load.js";
import {
  listTranscriptTrash,
  purgeExpiredTranscripts,
  purgeTranscript,
  restoreTranscript,
} from "./session-store-trash.js";
import { assertAgentSdkInstalled } from "./summary-fold.js";
import type {
  CompleteSessionStore,
  SessionKey,
  SessionStoreDeleteOptions,
  SessionStoreTrash,
  StoreOperationOptions,
} from "./types.js";

/** Longest object key core's ObjectStores take, in UTF-8 bytes (core's key rule). */
const OBJECT_KEY_BYTES = 1024;
/** Longest session id: core's safe-id rule. */
const SESSION_ID_LENGTH = 128;

/** Where transcripts go when no prefix is given. */
export const DEFAULT_SESSION_STORE_PREFIX = "session-store";
/**
 * Longest prefix, in UTF-8 bytes (89): with the longest project key, session id and subpath a
 * SessionStore accepts and a part name, every object key stays within core's 1,024 bytes, so
 * this store never refuses a key that another backend takes.
 */
export const MAX_SESSION_STORE_PREFIX_BYTES =
  OBJECT_KEY_BYTES -
  (MAX_PROJECT_KEY_LENGTH + SESSION_ID_LENGTH + MAX_SUBPATH_BYTES + PART_NAME_LENGTH + "////".length);
/**
 * Single parts after which an append compacts them into one range part: 0, never. Compaction
 * writes every byte a second time, which halved append throughput on RGW (bandwidth-bound), and
 * a load fetches a few large objects instead of many small ones in parallel, which was not faster
 * there either; it saves objects and GETs where requests cost more than bytes.
 */
export const DEFAULT_COMPACT_AFTER_PARTS = 0;

export interface ObjectSessionStoreOptions extends SessionStorePayloadOptions {
  /** Any ObjectStore: memory, the file system, S3, PostgreSQL. */
  store: ObjectStore;
  /** Key prefix of every transcript: a safe key of at most 89 UTF-8 bytes. Default `session-store`. */
  prefix?: string;
  /**
   * An append that leaves this many single parts after the last range part compacts them into
   * one (`0` never does; `compact(key)` always can). Default 0.
   */
  compactAfterParts?: number;
  /**
   * Days a `delete` keeps the transcript in the store's trash (`<prefix>/~trash/`), restorable,
   * before `purgeExpiredTrash` may delete it; `0` deletes at once. Default 7; 0 to 365.
   */
  trashDays?: number;
}

export interface ObjectSessionStore extends CompleteSessionStore, SessionStoreTrash {
  /** Into the trash for `trashDays` (the call's, else the store's); see {@link ObjectSessionStoreOptions.trashDays}. */
  delete(key: SessionKey, options?: SessionStoreDeleteOptions): Promise<void>;
  /**
   * Merges every part of one transcript into one range part and empties the parts it replaced.
   * Safe while other writers append: it replaces exactly the parts it read.
   */
  compact(key: SessionKey, options?: StoreOperationOptions): Promise<void>;
}

/**
 * The Claude Agent SDK's `SessionStore` over any ObjectStore. Each append is one immutable part
 * object, `<prefix>/<projectKey>/<sessionId>[/<subpath>]/part-<seq>-<seq>.jsonl`, written
 * create-only at the next sequence number: two writers never overwrite each other, and the one
 * that loses retries with the next number. `load` reads the parts in order; append is idempotent
 * on `uuid`; the main transcript's parts carry the SDK's folded summary; many small parts are
 * compacted into one. Given `blobs`, images and documents in the entries are kept there once and
 * the parts hold their refs; `load` gives back the entries exactly as they were appended.
 */
export function createObjectSessionStore(options: ObjectSessionStoreOptions): ObjectSessionStore {
  if (typeof options !== "object" || options === null || typeof options.store?.put !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `createObjectSessionStore: store must be an ObjectStore, got ${describeValue(options?.store)}`,
    );
  }
  const { store } = options;
  const prefix = options.prefix ?? DEFAULT_SESSION_STORE_PREFIX;
  const prefixProblem = keyProblem(prefix);
  if (prefixProblem) {
    throw new StowageError("INVALID_INPUT", `prefix ${prefixProblem}, got ${describeValue(prefix)}`);
  }
  if (Buffer.byteLength(prefix) > MAX_SESSION_STORE_PREFIX_BYTES) {
    throw new StowageError(
      "INVALID_INPUT",
      `prefix must be at most ${MAX_SESSION_STORE_PREFIX_BYTES} UTF-8 bytes, got ${describeValue(prefix)}`,
      { details: { limit: MAX_SESSION_STORE_PREFIX_BYTES } },
    );
  }
  const compactAfterParts = options.compactAfterParts ?? DEFAULT_COMPACT_AFTER_PARTS;
  if (!Number.isInteger(compactAfterParts) || compactAfterParts < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `compactAfterParts must be a non-negative integer, got ${describeValue(compactAfterParts)}`,
    );
  }
  const trashDays = trashDaysOf(options.trashDays);
  const payloads = entryPayloadsFrom(options, "createObjectSessionStore");
  assertAgentSdkInstalled();
  const context: SessionStoreContext = {
    store,
    prefix,
    compactAfterParts,
    trashDays,
    payloads,
    queues: new Map(),
    states: new Map(),
  };
  return {
    append: (key, batch, operation) => appendEntries(context, key, batch, operation),
    load: (key, operation) => loadTranscript(context, key, operation),
    listSessions: (projectKey, operation) => listProjectSessions(context, projectKey, operation),
    listSessionSummaries: (projectKey, operation) => listProjectSummaries(context, projectKey, operation),
    delete: (key, operation) => deleteTranscript(context, key, operation),
    listSubkeys: (key, operation) => listTranscriptSubkeys(context, key, operation),
    compact: (key, operation) => compactTranscript(context, key, operation),
    listTrash: (projectKey, operation) => listTranscriptTrash(context, projectKey, operation),
    restoreFromTrash: (projectKey, trashId, operation) =>
      restoreTranscript(context, projectKey, trashId, operation),
    purgeFromTrash: (projectKey, trashId, operation) =>
      purgeTranscript(context, projectKey, trashId, operation),
    purgeExpiredTrash: (operation) => purgeExpiredTranscripts(context, operation),
  };
}
