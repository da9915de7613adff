import {
  describeValue,
  keyProblem,
  largest,
  MAX_KEY_BYTES,
  MAX_SAFE_ID_LENGTH,
  mapConcurrent,
  type ObjectStore,
  pushAll,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import { encodePart, MAX_PART_SEQ, PART_NAME_LENGTH, parsePartName, partName } from "./part-object.js";
import { listParts, READ_CONCURRENCY, readSummary, readTranscript, selectParts } from "./read-parts.js";
import {
  assertSessionStoreProjectKey,
  describeSessionKey,
  MAX_PROJECT_KEY_LENGTH,
  MAX_SUBPATH_BYTES,
  parseStoredEntry,
  type SerializedEntry,
  type StoredSessionKey,
  serializeEntries,
  toSessionScope,
  toStoredSessionKey,
} from "./session-store-key.js";
import { assertAgentSdkInstalled, loadSummaryFold } from "./summary-fold.js";
import type {
  CompleteSessionStore,
  SessionKey,
  SessionStoreEntry,
  SessionSummaryEntry,
  StoreOperationOptions,
} from "./types.js";

/** Where transcripts go when no prefix is given. */
export const DEFAULT_SESSION_STORE_PREFIX = "session-store";
/**
 * Longest prefix, in UTF-8 bytes (89): with the longest project key, session id and subpath a
 * SessionStore accepts and a part name, every object key stays within core's `MAX_KEY_BYTES`, so
 * this store never refuses a key that another backend takes.
 */
export const MAX_SESSION_STORE_PREFIX_BYTES =
  MAX_KEY_BYTES -
  (MAX_PROJECT_KEY_LENGTH + MAX_SAFE_ID_LENGTH + MAX_SUBPATH_BYTES + PART_NAME_LENGTH + "////".length);
/**
 * Single parts after which an append compacts them into one range part: 0, never. Compaction
 * writes every byte a second time, which halved append throughput on RGW (bandwidth-bound), and
 * a load fetches a few large objects instead of many small ones in parallel, which was not faster
 * there either; it saves objects and GETs where requests cost more than bytes.
 */
export const DEFAULT_COMPACT_AFTER_PARTS = 0;
/** Transcripts whose state (last sequence, uuids, summary) one store keeps in memory. */
const CACHED_TRANSCRIPTS = 256;
/** Create-only attempts of one append before it gives up (each lost race means another writer won). */
const APPEND_ATTEMPTS = 64;

export interface ObjectSessionStoreOptions {
  /** Any ObjectStore: memory, the file system, S3, PostgreSQL. */
  store: ObjectStore;
  /** Key prefix of every transcript; default {@link DEFAULT_SESSION_STORE_PREFIX}. */
  prefix?: string;
  /**
   * An append that leaves this many single parts after the last range part compacts them into
   * one (`0` never does; `compact(key)` always can). Default {@link DEFAULT_COMPACT_AFTER_PARTS} (0).
   */
  compactAfterParts?: number;
}

export interface ObjectSessionStore extends CompleteSessionStore {
  /**
   * Merges every part of one transcript into one range part and empties the parts it replaced.
   * Safe while other writers append: it replaces exactly the parts it read.
   */
  compact(key: SessionKey, options?: StoreOperationOptions): Promise<void>;
}

/** What this process knows of one transcript, so that an append is one create-only put. */
interface TranscriptState {
  lastSeq: number;
  uuids: Set<string>;
  summary: SessionSummaryEntry | undefined;
  /** Last sequence covered by a range part, and the single parts after it. */
  rangeEnd: number;
  singles: number;
  /** Lines of the parts this process wrote since `rangeEnd`, while nobody else wrote. */
  own: { lines: string[]; counts: number[] } | undefined;
}

const emptyState = (): TranscriptState => ({
  lastSeq: 0,
  uuids: new Set(),
  summary: undefined,
  rangeEnd: 0,
  singles: 0,
  own: { lines: [], counts: [] },
});

/** What an append needs of a stored entry line: its uuid, once the line is checked as a load checks it. */
const storedUuid = (line: string): string | null => parseStoredEntry(line).uuid ?? null;
/** A stored entry line checked, kept as its text: a compaction must not copy a corrupt line into a range. */
const checkedLine = (line: string): string => {
  parseStoredEntry(line);
  return line;
};

// StowageError.is, not instanceof: a store built on another copy of @stowage/core (two versions in
// one install) throws errors of that copy's class, and a lost create race must still be recognized.
function isAlreadyExists(err: unknown): boolean {
  return StowageError.is(err, "ALREADY_EXISTS");
}

/**
 * The Claude Agent SDK's `SessionStore` over any ObjectStore. Each append is one immutable part
 * object, `<prefix>/<projectKey>/<sessionId>[/<subpath>]/part-<seq>-<seq>.jsonl`, written
 * create-only at the next sequence number: two writers never overwrite each other, and the one
 * that loses retries with the next number. `load` reads the parts in order; append is idempotent
 * on `uuid`; the main transcript's parts carry the SDK's folded summary; many small parts are
 * compacted into one.
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
  const prefixProblem =
    keyProblem(prefix) ??
    (Buffer.byteLength(prefix) > MAX_SESSION_STORE_PREFIX_BYTES
      ? `must be at most ${MAX_SESSION_STORE_PREFIX_BYTES} UTF-8 bytes`
      : undefined);
  if (prefixProblem) {
    throw new StowageError("INVALID_INPUT", `prefix ${prefixProblem}, got ${describeValue(prefix)}`);
  }
  const compactAfterParts = options.compactAfterParts ?? DEFAULT_COMPACT_AFTER_PARTS;
  if (!Number.isInteger(compactAfterParts) || compactAfterParts < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `compactAfterParts must be a non-negative integer, got ${describeValue(compactAfterParts)}`,
    );
  }
  assertAgentSdkInstalled();

  const projectDirectory = (projectKey: string) => `${prefix}/${projectKey}/`;
  const sessionDirectory = (projectKey: string, sessionId: string) => `${prefix}/${projectKey}/${sessionId}/`;
  const directoryOf = (key: StoredSessionKey) =>
    `${sessionDirectory(key.projectKey, key.sessionId)}${key.subpath ? `${key.subpath}/` : ""}`;

  function toKey(key: SessionKey): StoredSessionKey {
    const stored = toStoredSessionKey(key);
    // A subpath segment named like a part would turn a part into a directory on a file system.
    if (stored.subpath.split("/").some((segment) => parsePartName(segment) !== undefined)) {
      throw new StowageError(
        "INVALID_INPUT",
        `subpath must not have a segment named like a part, got ${describeValue(stored.subpath)}`,
      );
    }
    return stored;
  }

  // One operation at a time per transcript in this process: appends keep their call order and
  // the cached state never races itself. Other processes are handled by create-only puts.
  const queues = new Map<string, Promise<unknown>>();
  function serialize<T>(directory: string, run: () => Promise<T>): Promise<T> {
    const previous = queues.get(directory) ?? Promise.resolve();
    const next = previous.then(run, run);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    queues.set(directory, settled);
    void settled.then(() => {
      if (queues.get(directory) === settled) queues.delete(directory);
    });
    return next;
  }

  const states = new Map<string, TranscriptState>();
  function remember(directory: string, state: TranscriptState): void {
    states.delete(directory);
    states.set(directory, state);
    if (states.size > CACHED_TRANSCRIPTS) states.delete(states.keys().next().value!);
  }
  function forget(directoryPrefix: string): void {
    for (const directory of [...states.keys()])
      if (directory.startsWith(directoryPrefix)) states.delete(directory);
  }

  /** Reads what this process does not know yet of a transcript (all of it when `known` is undefined). */
  async function refresh(
    directory: string,
    known: TranscriptState | undefined,
    signal: AbortSignal | undefined,
  ): Promise<TranscriptState> {
    const read = await readTranscript(store, directory, known?.lastSeq ?? 0, signal, storedUuid);
    // Gone or rewritten since (a delete, from another process): start from what is there now.
    if (read === null) return emptyState();
    if (known && read.lastSeq < known.lastSeq) return refresh(directory, undefined, signal);
    const state: TranscriptState = known
      ? { ...known, uuids: known.uuids, own: undefined }
      : { ...emptyState(), own: undefined };
    for (const uuid of read.lines) if (uuid !== null) state.uuids.add(uuid);
    state.lastSeq = read.lastSeq;
    state.summary = read.summary ?? state.summary;
    const selected = selectParts(read.parts.filter((part) => part.size > 0));
    state.rangeEnd = largest(
      selected.filter((part) => part.last > part.first).map((part) => part.last),
      0,
    );
    state.singles = selected.filter((part) => part.first > state.rangeEnd).length;
    return state;
  }

  /** Writes one range part for sequences `first..last` and empties every part it replaces. */
  async function writeRange(
    directory: string,
    first: number,
    last: number,
    body: { lines: string[]; counts: number[]; summary: SessionSummaryEntry | undefined },
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const rangeKey = directory + partName(first, last);
    try {
      await store.put(rangeKey, encodePart(rangeKey, body, body.lines), { ifNoneMatch: "*", signal });
    } catch (err) {
      // Another compaction of the same parts got there first: its range holds the same entries.
      if (!isAlreadyExists(err)) throw err;
    }
    // Only now are the replaced parts emptied: a reader always finds the entries somewhere.
    const replaced = (await listParts(store, directory, signal)).filter(
      (part) => part.first >= first && part.last <= last && part.key !== rangeKey && part.size > 0,
    );
    await mapConcurrent(
      replaced,
      READ_CONCURRENCY,
      async (part) => {
        const { created } = await store.put(part.key, new Uint8Array(0), { signal });
        // A delete from another process removed the part since it was listed: an empty part where
        // there was none would read as entries lost, so it goes too.
        if (created) await store.delete(part.key, { signal });
      },
      signal,
    );
  }

  /** True when every sequence `first..last` is still a non-empty single part. */
  async function singlesStored(
    directory: string,
    first: number,
    last: number,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const live = new Set<number>();
    for (const part of await listParts(store, directory, signal))
      if (part.first === part.last && part.size > 0) live.add(part.first);
    for (let seq = first; seq <= last; seq++) if (!live.has(seq)) return false;
    return true;
  }

  async function compactTail(
    directory: string,
    state: TranscriptState,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const first = state.rangeEnd + 1;
    const last = state.lastSeq;
    if (last <= first) return;
    let body =
      state.own && state.own.counts.length === last - first + 1
        ? { ...state.own, summary: state.summary }
        : undefined;
    // The lines this process wrote are only the tail while its parts are still there: after a
    // delete by another process, a range made of them would bring the deleted entries back.
    if (body && !(await singlesStored(directory, first, last, signal))) body = undefined;
    if (!body) {
      const read = await readTranscript(store, directory, state.rangeEnd, signal, checkedLine);
      if (read === null || read.firstSeq !== first || read.lastSeq !== last) return; // changed: next time
      body = { lines: read.lines, counts: read.counts, summary: read.summary };
    }
    await writeRange(directory, first, last, body, signal);
    state.rangeEnd = last;
    state.singles = 0;
    state.own = { lines: [], counts: [] };
  }

  async function appendOnce(
    key: SessionKey,
    stored: StoredSessionKey,
    batch: SessionStoreEntry[],
    serialized: SerializedEntry[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const directory = directoryOf(stored);
    const cached = states.get(directory);
    let state = cached ?? (await refresh(directory, undefined, signal));
    // The cache alone may not drop an entry as stored: another process may have deleted the
    // transcript since, or deleted and written it again under the same sequence numbers. Only
    // an append that repeats a uuid pays for reading it again: an entry the cache does not know
    // is written whatever else the cache says, and a stale sequence number at worst meets
    // ALREADY_EXISTS and re-reads.
    if (cached && serialized.some((entry) => entry.uuid !== null && cached.uuids.has(entry.uuid))) {
      state = await refresh(directory, undefined, signal);
    }
    for (let attempt = 1; ; attempt++) {
      const fresh: number[] = [];
      const inBatch = new Set<string>();
      for (const [index, entry] of serialized.entries()) {
        if (entry.uuid === null) fresh.push(index);
        else if (!state.uuids.has(entry.uuid) && !inBatch.has(entry.uuid)) {
          inBatch.add(entry.uuid);
          fresh.push(index);
        }
      }
      if (fresh.length === 0) {
        remember(directory, state);
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
      const partKey = directory + partName(seq, seq);
      try {
        throwIfAborted(signal, `session store append ${describeSessionKey(stored)}`);
        await store.put(partKey, encodePart(partKey, { counts: [lines.length], summary }, lines), {
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
        state = await refresh(directory, state, signal);
        continue;
      }
      state.lastSeq = seq;
      for (const index of fresh) {
        const uuid = serialized[index]!.uuid;
        if (uuid !== null) state.uuids.add(uuid);
      }
      state.summary = summary ?? state.summary;
      state.singles++;
      if (state.own && compactAfterParts > 0) {
        pushAll(state.own.lines, lines);
        state.own.counts.push(lines.length);
      }
      remember(directory, state);
      if (compactAfterParts > 0 && state.singles >= compactAfterParts)
        await compactTail(directory, state, signal);
      return;
    }
  }

  return {
    async append(key, batch, { signal } = {}) {
      const stored = toKey(key);
      const serialized = serializeEntries(batch);
      // An empty batch changes nothing (the SDK's contract): a key never written stays null.
      if (serialized.length === 0) return;
      await serialize(directoryOf(stored), () => appendOnce(key, stored, batch, serialized, signal));
    },

    async load(key, { signal } = {}) {
      const stored = toKey(key);
      const read = await readTranscript(store, directoryOf(stored), 0, signal, parseStoredEntry);
      return read === null ? null : read.lines;
    },

    async listSessions(projectKey, { signal } = {}) {
      const sessions = await scanProject(projectKey, signal);
      return [...sessions].map(([sessionId, { mtime }]) => ({ sessionId, mtime }));
    },

    async listSessionSummaries(projectKey, { signal } = {}) {
      const sessions = [...(await scanProject(projectKey, signal))];
      const summaries = await mapConcurrent(
        sessions,
        READ_CONCURRENCY,
        async ([sessionId, { mtime }]) => {
          const summary = await readSummary(store, sessionDirectory(projectKey, sessionId), signal);
          // The sidecar's time is the storage's, the clock listSessions reads (the SDK compares them).
          return summary ? { sessionId, mtime, data: summary.data } : undefined;
        },
        signal,
      );
      return summaries.filter((summary): summary is SessionSummaryEntry => summary !== undefined);
    },

    async delete(key, { signal } = {}) {
      const stored = toKey(key);
      const directory = directoryOf(stored);
      await serialize(directory, async () => {
        // A main transcript takes its subkeys (subagent transcripts) with it; a subpath only itself.
        const keys: string[] = [];
        if (stored.subpath === "") {
          for await (const item of store.iterate({ prefix: directory, signal })) keys.push(item.key);
        } else {
          for (const part of await listParts(store, directory, signal)) keys.push(part.key);
        }
        await mapConcurrent(
          keys,
          READ_CONCURRENCY,
          (objectKey) => store.delete(objectKey, { signal }),
          signal,
        );
        forget(directory);
      });
    },

    async listSubkeys(key, { signal } = {}) {
      const { projectKey, sessionId } = toSessionScope(key);
      const directory = sessionDirectory(projectKey, sessionId);
      const subkeys = new Set<string>();
      for await (const item of store.iterate({ prefix: directory, signal })) {
        const rest = item.key.slice(directory.length);
        const slash = rest.lastIndexOf("/");
        if (slash > 0 && parsePartName(rest.slice(slash + 1))) subkeys.add(rest.slice(0, slash));
      }
      return [...subkeys].sort();
    },

    async compact(key, { signal } = {}) {
      const stored = toKey(key);
      const directory = directoryOf(stored);
      await serialize(directory, async () => {
        const read = await readTranscript(store, directory, 0, signal, checkedLine);
        if (read === null || read.parts.filter((part) => part.size > 0).length <= 1) return;
        await writeRange(directory, read.firstSeq, read.lastSeq, read, signal);
        forget(directory);
      });
    },
  };

  /** Sessions of a project with a main transcript, each with its newest part's time (storage clock). */
  async function scanProject(projectKey: string, signal: AbortSignal | undefined) {
    assertSessionStoreProjectKey(projectKey);
    const directory = projectDirectory(projectKey);
    const sessions = new Map<string, { mtime: number }>();
    for await (const item of store.iterate({ prefix: directory, signal })) {
      const rest = item.key.slice(directory.length);
      const slash = rest.indexOf("/");
      if (slash <= 0 || !parsePartName(rest.slice(slash + 1))) continue; // a subpath's part
      const sessionId = rest.slice(0, slash);
      const mtime = item.lastModified.getTime();
      const seen = sessions.get(sessionId);
      if (!seen || mtime > seen.mtime) sessions.set(sessionId, { mtime });
    }
    return sessions;
  }
}
