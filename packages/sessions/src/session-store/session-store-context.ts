import type { MovedPayload } from "@stowage/blob-store";
import { type ObjectStore, StowageError } from "@stowage/core";
import type { EntryPayloads } from "./entry-payloads.js";
import { type StoredSessionKey, toStoredSessionKey } from "./session-store-key.js";
import type { SessionKey, SessionSummaryEntry } from "./types.js";

/** Transcripts whose state (last sequence, uuids, summary) one store keeps in memory. */
const CACHED_TRANSCRIPTS = 256;

/** What this process knows of one transcript, so that an append is one create-only put. */
export interface TranscriptState {
  lastSeq: number;
  uuids: Set<string>;
  summary: SessionSummaryEntry | undefined;
  /** Last sequence covered by a range part, and the single parts after it. */
  rangeEnd: number;
  singles: number;
  /** Lines of the parts this process wrote since `rangeEnd`, while nobody else wrote. */
  own: OwnLines | undefined;
  /** The payloads the transcript's parts hold (SHA-256): a later entry's ref to one is enough. */
  held: Set<string>;
}

/**
 * Entry lines as a compaction writes them: their text, lines per sequence, their moved payloads
 * by line, and the bytes of the payloads their parts hold.
 */
export interface OwnLines {
  lines: string[];
  counts: number[];
  moved: Map<number, readonly MovedPayload[]>;
  held: Map<string, Uint8Array>;
}

export const noOwnLines = (): OwnLines => ({ lines: [], counts: [], moved: new Map(), held: new Map() });

export const emptyState = (): TranscriptState => ({
  lastSeq: 0,
  uuids: new Set(),
  held: new Set(),
  summary: undefined,
  rangeEnd: 0,
  singles: 0,
  own: noOwnLines(),
});

/**
 * One object SessionStore: its checked options, and what it keeps in memory between operations.
 * Every operation of `createObjectSessionStore` is a module-level function over it.
 */
export interface SessionStoreContext {
  store: ObjectStore;
  prefix: string;
  compactAfterParts: number;
  /** Days a `delete` keeps a transcript in the trash when the call does not say (0: none). */
  trashDays: number;
  /** Where image and document payloads go, when the store was given a blob store. */
  payloads: EntryPayloads | undefined;
  /** The tail of each transcript's queue of operations in this process (see {@link serialize}). */
  queues: Map<string, Promise<unknown>>;
  /** Each transcript's state, by directory, least recently used first. */
  states: Map<string, TranscriptState>;
}

export const projectDirectory = (context: SessionStoreContext, projectKey: string) =>
  `${context.prefix}/${projectKey}/`;

export const sessionDirectory = (context: SessionStoreContext, projectKey: string, sessionId: string) =>
  `${context.prefix}/${projectKey}/${sessionId}/`;

/** The directory of one transcript's parts: the session's, or its subpath's inside it. */
export const directoryOf = (context: SessionStoreContext, key: StoredSessionKey) =>
  `${sessionDirectory(context, key.projectKey, key.sessionId)}${key.subpath ? `${key.subpath}/` : ""}`;

/** `key` checked as every backend checks it (the layout's needs are among those checks). */
export const toStoredKey = (key: SessionKey): StoredSessionKey => toStoredSessionKey(key);

/**
 * Runs `run` after every operation on `directory` already queued in this process: appends keep
 * their call order and the cached state never races itself. Other processes are handled by
 * create-only puts.
 */
export function serialize<T>(
  context: SessionStoreContext,
  directory: string,
  run: () => Promise<T>,
): Promise<T> {
  const { queues } = context;
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

/** Keeps `state` as the most recently used, dropping the least recently used past the cap. */
export function remember(context: SessionStoreContext, directory: string, state: TranscriptState): void {
  const { states } = context;
  states.delete(directory);
  states.set(directory, state);
  if (states.size > CACHED_TRANSCRIPTS) states.delete(states.keys().next().value!);
}

/** Forgets the state of every transcript whose directory starts with `directoryPrefix`. */
export function forget(context: SessionStoreContext, directoryPrefix: string): void {
  for (const directory of [...context.states.keys()])
    if (directory.startsWith(directoryPrefix)) context.states.delete(directory);
}

// StowageError.is, not instanceof: a store built on another copy of @stowage/core (two versions in
// one install) throws errors of that copy's class, and a lost create race must still be recognized.
export function isAlreadyExists(err: unknown): boolean {
  return StowageError.is(err, "ALREADY_EXISTS");
}
