import { mapConcurrent, type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import { decodeLogRecord, encodeLogRecord, type LiveItem, type LogRecord, replay } from "./session-log.js";

/** Objects read at once (S3 round trips overlap). */
const CONCURRENCY = 16;
/** Digits of a sequence number in a key, so that keys list in sequence order. */
const SEQ_DIGITS = 12;
/** Times an operation reads the log again after another writer took its sequence number. */
export const MAX_ATTEMPTS = 64;

/** One session's log in a store, and the records this process has read of it. */
export interface SessionRecordsContext {
  store: ObjectStore;
  sessionId: string;
  /** `<prefix><sessionId>/`. */
  directory: string;
  /** Records already read, by key: a record is written once and never changed. */
  read: Map<string, { size: number; lastModified: number; record: LogRecord }>;
}

const keyOf = (context: SessionRecordsContext, seq: number) =>
  `${context.directory}${String(seq).padStart(SEQ_DIGITS, "0")}`;

/** The session's log read now: its items, and the sequence number the next record takes. */
export async function readSession(
  context: SessionRecordsContext,
): Promise<{ live: LiveItem[]; next: number }> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const listed: { key: string; seq: number; size: number; lastModified: number }[] = [];
    for await (const item of context.store.iterate({ prefix: context.directory })) {
      const name = item.key.slice(context.directory.length);
      if (!/^\d+$/.test(name)) continue;
      listed.push({
        key: item.key,
        seq: Number(name),
        size: item.size,
        lastModified: item.lastModified.getTime(),
      });
    }
    const seen = new Set(listed.map(({ key }) => key));
    for (const key of context.read.keys()) if (!seen.has(key)) context.read.delete(key);
    // A key deleted and written again (the session deleted, then used anew) is read again.
    const unread = listed.filter(({ key, size, lastModified }) => {
      const known = context.read.get(key);
      return !known || known.size !== size || known.lastModified !== lastModified;
    });
    const fetched = await mapConcurrent(unread, CONCURRENCY, async ({ key, seq, size, lastModified }) => {
      const bytes = await context.store.get(key);
      if (bytes === null) return false;
      context.read.set(key, {
        size,
        lastModified,
        record: decodeLogRecord(key, bytes, context.sessionId, seq),
      });
      return true;
    });
    // A record gone since it was listed was cleared by another process: list again.
    if (fetched.includes(false)) continue;
    const records = listed.map(({ key, seq }) => ({ seq, record: context.read.get(key)!.record }));
    return { live: replay(records), next: (listed.at(-1)?.seq ?? 0) + 1 };
  }
  throw new StowageError("CONFLICT", `session ${context.sessionId} kept changing while it was read`, {
    reason: "SESSION_CHANGING",
  });
}

/** Writes `record` at `seq` create-only: false when another writer took that number first. */
export async function writeRecord(
  context: SessionRecordsContext,
  seq: number,
  record: LogRecord,
): Promise<boolean> {
  try {
    await context.store.put(keyOf(context, seq), encodeLogRecord(context.sessionId, seq, record), {
      ifNoneMatch: "*",
    });
    return true;
  } catch (err) {
    if (StowageError.is(err, "ALREADY_EXISTS")) return false;
    throw err;
  }
}

/** Deletes the records before `seq` (after a clear at `seq`); one already gone is fine. */
export async function deleteBefore(context: SessionRecordsContext, seq: number): Promise<void> {
  const keys: string[] = [];
  for await (const item of context.store.iterate({ prefix: context.directory })) {
    const name = item.key.slice(context.directory.length);
    if (/^\d+$/.test(name) && Number(name) < seq) keys.push(item.key);
  }
  await mapConcurrent(keys, CONCURRENCY, (key) => context.store.delete(key));
}

export const contended = (sessionId: string) =>
  new StowageError("CONFLICT", `session ${sessionId}: other writers took every sequence number tried`, {
    reason: "SESSION_CONTENDED",
    details: { limit: MAX_ATTEMPTS },
  });

/** Listings of a deleted session that may still find a record another writer added meanwhile. */
const DELETE_ROUNDS = 8;

/**
 * Deletes every object of the session, listing again until a listing finds none (a writer that
 * added a record while it ran): whether there was any.
 */
export async function deleteSessionRecords(
  context: SessionRecordsContext,
  options: OperationOptions = {},
): Promise<boolean> {
  let found = false;
  for (let round = 1; round <= DELETE_ROUNDS; round++) {
    const keys: string[] = [];
    for await (const item of context.store.iterate({ prefix: context.directory, ...options }))
      keys.push(item.key);
    if (keys.length === 0) return found;
    found = true;
    await mapConcurrent(keys, CONCURRENCY, (key) => context.store.delete(key, options), options.signal);
  }
  throw new StowageError("CONFLICT", `session ${context.sessionId} kept being written while it was deleted`, {
    reason: "SESSION_CHANGING",
  });
}
