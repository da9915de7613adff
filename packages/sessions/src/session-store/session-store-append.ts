import type { MovedPayload } from "@stowage/blob-store";
import { pushAll, StowageError, throwIfAborted } from "@stowage/core";
import { takeEntryPayloads } from "./entry-payloads.js";
import { encodePart, MAX_PART_SEQ, partName } from "./part-object.js";
import { readTranscript, selectParts } from "./read-parts.js";
import { compactTail } from "./session-store-compact.js";
import {
  directoryOf,
  emptyState,
  isAlreadyExists,
  remember,
  type SessionStoreContext,
  serialize,
  type TranscriptState,
  toStoredKey,
} from "./session-store-context.js";
import {
  describeSessionKey,
  parseStoredEntry,
  type SerializedEntry,
  type StoredSessionKey,
  serializeEntries,
} from "./session-store-key.js";
import { loadSummaryFold } from "./summary-fold.js";
import type { SessionKey, SessionStoreEntry, StoreOperationOptions } from "./types.js";

/** Create-only attempts of one append before it gives up (each lost race means another writer won). */
const APPEND_ATTEMPTS = 64;

/** What an append needs of a stored entry line: its uuid, once the line is checked as a load checks it. */
const storedUuid = (line: string): string | null => parseStoredEntry(line).uuid ?? null;

/** Reads what this process does not know yet of a transcript (all of it when `known` is undefined). */
async function refresh(
  context: SessionStoreContext,
  directory: string,
  known: TranscriptState | undefined,
  signal: AbortSignal | undefined,
): Promise<TranscriptState> {
  const read = await readTranscript(context.store, directory, known?.lastSeq ?? 0, signal, storedUuid);
  // Gone or rewritten since (a delete, from another process): start from what is there now.
  if (read === null) return emptyState();
  if (known && read.lastSeq < known.lastSeq) return refresh(context, directory, undefined, signal);
  const state: TranscriptState = known
    ? { ...known, uuids: known.uuids, own: undefined }
    : { ...emptyState(), own: undefined };
  for (const uuid of read.lines) if (uuid !== null) state.uuids.add(uuid);
  for (const sha256 of read.held.keys()) state.held.add(sha256);
  state.lastSeq = read.lastSeq;
  state.summary = read.summary ?? state.summary;
  const selected = selectParts(read.parts.filter((part) => part.size > 0));
  state.rangeEnd = selected.reduce(
    (highest, part) => (part.last > part.first ? Math.max(highest, part.last) : highest),
    0,
  );
  state.singles = selected.filter((part) => part.first > state.rangeEnd).length;
  return state;
}

/**
 * The payloads the part of `fresh` entries holds: those their refs name that no part of the
 * transcript holds yet, as far as `state` knows.
 */
function payloadsToHold(
  serialized: readonly SerializedEntry[],
  fresh: readonly number[],
  taken: ReadonlyMap<string, Uint8Array>,
  state: TranscriptState,
): Map<string, Uint8Array> {
  const held = new Map<string, Uint8Array>();
  for (const index of fresh) {
    for (const { sha256 } of serialized[index]!.moved ?? []) {
      if (!state.held.has(sha256) && !held.has(sha256)) held.set(sha256, taken.get(sha256)!);
    }
  }
  return held;
}

/** Indexes of the entries of `serialized` that `state` does not hold yet, each uuid once. */
function freshEntries(serialized: SerializedEntry[], state: TranscriptState): number[] {
  const fresh: number[] = [];
  const inBatch = new Set<string>();
  for (const [index, entry] of serialized.entries()) {
    if (entry.uuid === null) fresh.push(index);
    else if (!state.uuids.has(entry.uuid) && !inBatch.has(entry.uuid)) {
      inBatch.add(entry.uuid);
      fresh.push(index);
    }
  }
  return fresh;
}

async function appendOnce(
  context: SessionStoreContext,
  key: SessionKey,
  stored: StoredSessionKey,
  batch: SessionStoreEntry[],
  serialized: SerializedEntry[],
  taken: ReadonlyMap<string, Uint8Array>,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { store, compactAfterParts } = context;
  const directory = directoryOf(context, stored);
  const cached = context.states.get(directory);
  let state = cached ?? (await refresh(context, directory, undefined, signal));
  // The cache alone may not drop an entry as stored: another process may have deleted the
  // transcript since, or deleted and written it again under the same sequence numbers. Only
  // an append that repeats a uuid pays for reading it again: an entry the cache does not know
  // is written whatever else the cache says, and a stale sequence number at worst meets
  // ALREADY_EXISTS and re-reads.
  if (cached && serialized.some((entry) => entry.uuid !== null && cached.uuids.has(entry.uuid))) {
    state = await refresh(context, directory, undefined, signal);
  }
  for (let attempt = 1; ; attempt++) {
    const fresh = freshEntries(serialized, state);
    if (fresh.length === 0) {
      remember(context, directory, state);
      return;
    }
    const seq = state.lastSeq + 1;
    if (seq > MAX_PART_SEQ)
      throw new StowageError("TOO_LARGE", `session store ${directory}: out of sequence numbers`);
    const summary =
      stored.subpath === ""
        ? (await loadSummaryFold())(
            state.summary,
            key,
            fresh.map((index) => batch[index]!),
            { mtime: Date.now() },
          )
        : undefined;
    const lines = fresh.map((index) => serialized[index]!.json);
    const moved = new Map<number, readonly MovedPayload[]>();
    for (const [line, index] of fresh.entries()) {
      const payloads = serialized[index]!.moved;
      if (payloads) moved.set(line, payloads);
    }
    const held = payloadsToHold(serialized, fresh, taken, state);
    const partKey = directory + partName(seq, seq);
    try {
      throwIfAborted(signal, `session store append ${describeSessionKey(stored)}`);
      await store.put(partKey, encodePart(partKey, { counts: [lines.length], summary, moved, held }, lines), {
        ifNoneMatch: "*",
        contentType: "application/x-ndjson",
        signal,
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      if (attempt >= APPEND_ATTEMPTS) {
        throw new StowageError(
          "CONFLICT",
          `session store append ${describeSessionKey(stored)}: lost ${APPEND_ATTEMPTS} races for the next part; retry`,
          { cause: err, reason: "APPEND_CONTENDED" },
        );
      }
      // Another writer took this sequence number: learn what it wrote, then take the next one.
      state = await refresh(context, directory, state, signal);
      continue;
    }
    state.lastSeq = seq;
    for (const index of fresh) {
      const uuid = serialized[index]!.uuid;
      if (uuid !== null) state.uuids.add(uuid);
    }
    for (const sha256 of held.keys()) state.held.add(sha256);
    state.summary = summary ?? state.summary;
    state.singles++;
    if (state.own && compactAfterParts > 0) {
      for (const [line, payloads] of moved) state.own.moved.set(state.own.lines.length + line, payloads);
      for (const [sha256, bytes] of held) state.own.held.set(sha256, bytes);
      pushAll(state.own.lines, lines);
      state.own.counts.push(lines.length);
    }
    remember(context, directory, state);
    if (compactAfterParts > 0 && state.singles >= compactAfterParts)
      await compactTail(context, directory, state, signal);
    return;
  }
}

/**
 * `append(key, batch)`: the entries not stored yet (by `uuid`) as one create-only part at the
 * next sequence number, after this process's earlier operations on the transcript. Their image
 * and document payloads are taken out and replaced by refs; the part holds the bytes of those no
 * earlier part of the transcript holds (as far as this process knows), so an append is one put.
 */
export async function appendEntries(
  context: SessionStoreContext,
  key: SessionKey,
  batch: SessionStoreEntry[],
  { signal }: StoreOperationOptions = {},
): Promise<void> {
  const stored = toStoredKey(key);
  const serialized = serializeEntries(batch);
  // An empty batch changes nothing (the SDK's contract): a key never written stays null.
  if (serialized.length === 0) return;
  const taken = context.payloads?.externalize ? takeEntryPayloads(batch, serialized) : new Map();
  await serialize(context, directoryOf(context, stored), () =>
    appendOnce(context, key, stored, batch, serialized, taken, signal),
  );
}
