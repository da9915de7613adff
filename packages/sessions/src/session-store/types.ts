/**
 * The Claude Agent SDK's SessionStore shapes, declared structurally so that this package needs
 * the SDK neither to type-check nor at run time (the SDK's own `SessionStore` type accepts these;
 * a test proves it). Names and meanings are the SDK's.
 */

/** Which transcript: a project (the SDK's sanitized cwd, or a tenant), a session, and a subagent subpath or none. */
export interface SessionKey {
  projectKey: string;
  sessionId: string;
  /** `subagents/agent-<id>` and the like; absent for the main transcript. */
  subpath?: string;
}

/** One JSONL transcript line: a string `type`, usually a `uuid`, the rest opaque JSON. */
export interface SessionStoreEntry {
  type: string;
  uuid?: string;
  timestamp?: string;
  [k: string]: unknown;
}

/** The SDK's incrementally folded session summary; `data` is the SDK's, kept verbatim. */
export interface SessionSummaryEntry {
  sessionId: string;
  /** The storage write time, on the same clock as `listSessions`' mtime. */
  mtime: number;
  data: Record<string, unknown>;
}

export interface StoreOperationOptions {
  signal?: AbortSignal;
}

/**
 * A SessionStore with every optional method of the SDK's, plus `{ signal }` as a last argument
 * (which the SDK never passes; callers may).
 */
export interface CompleteSessionStore {
  append(key: SessionKey, entries: SessionStoreEntry[], options?: StoreOperationOptions): Promise<void>;
  load(key: SessionKey, options?: StoreOperationOptions): Promise<SessionStoreEntry[] | null>;
  listSessions(
    projectKey: string,
    options?: StoreOperationOptions,
  ): Promise<Array<{ sessionId: string; mtime: number }>>;
  listSessionSummaries(projectKey: string, options?: StoreOperationOptions): Promise<SessionSummaryEntry[]>;
  delete(key: SessionKey, options?: StoreOperationOptions): Promise<void>;
  listSubkeys(
    key: { projectKey: string; sessionId: string },
    options?: StoreOperationOptions,
  ): Promise<string[]>;
}

/**
 * How a SessionStore that keeps its entries as rows of text keeps that text sealed (encrypted at
 * rest): `@stowage/tenancy`'s `sessionStoreSeal(principal)`, given to
 * `createPostgresSessionStore({ seal })`, which seals an append's entries as one text and opens
 * the batches a page of rows holds with one call.
 */
export interface SessionStoreSeal {
  /**
   * Each text (a string, or its UTF-8 bytes) sealed and bound to `boundTo` (one transcript): what
   * comes back holds no plaintext and no whitespace (the store may write clear text after it,
   * separated by a space), and does not start as JSON text can (`{["-`, a digit, `t`, `f`, `n`): a
   * store tells sealed rows from clear ones by that. Bytes let a store hand over a batch of lines
   * without joining them into one string first (a string over 128 KiB is allocated outside V8's
   * young generation, each on pages of its own).
   */
  seal(
    boundTo: string,
    texts: readonly (string | Uint8Array)[],
    options?: StoreOperationOptions,
  ): Promise<string[]>;
  /**
   * Each sealed text's plaintext as UTF-8 bytes (a store splits a batch's lines out of them without
   * decoding the whole): INTEGRITY when one was tampered with, moved from another `boundTo` or is
   * not sealed; FORBIDDEN when its data key is not held.
   */
  open(boundTo: string, texts: readonly string[], options?: StoreOperationOptions): Promise<Uint8Array[]>;
}

/** Options of a Stowage SessionStore's `delete`. */
export interface SessionStoreDeleteOptions extends StoreOperationOptions {
  /**
   * Days the transcript is kept in the store's trash, restorable, before a purge may take it:
   * default the store's `trashDays` (7); `0` deletes it at once. 0 to 365.
   */
  trashDays?: number;
}

/** A transcript a `delete` moved to its store's trash. */
export interface TrashedTranscript {
  /** Names it in the trash of its project (`restoreFromTrash`, `purgeFromTrash`). */
  trashId: string;
  projectKey: string;
  sessionId: string;
  /** The subagent transcript that was deleted alone; absent when the main one went, its subkeys with it. */
  subpath?: string;
  /** ISO 8601 time of the delete. */
  trashedAt: string;
  /** ISO 8601 time after which `purgeExpiredTrash` deletes it for good. */
  purgeAfter: string;
  /** What it holds in the store, in bytes (what the trash keeps taking). */
  bytes: number;
}

/**
 * The trash of a Stowage SessionStore: what `delete` took, kept where the store keeps it until
 * its `purgeAfter`, invisible to every read (`load`, listings, summaries, subkeys) meanwhile.
 */
export interface SessionStoreTrash {
  /** The project's transcripts in the trash, oldest delete first. */
  listTrash(projectKey: string, options?: StoreOperationOptions): Promise<TrashedTranscript[]>;
  /**
   * Puts a trashed transcript back exactly (every entry, in order; its subkeys with a main
   * transcript): NOT_FOUND (`NOT_IN_TRASH`) when the project has no such trash id; CONFLICT
   * (`TRANSCRIPT_REUSED`) when its key holds entries again (appended since the delete), leaving
   * both as they are.
   */
  restoreFromTrash(
    projectKey: string,
    trashId: string,
    options?: StoreOperationOptions,
  ): Promise<TrashedTranscript>;
  /** Deletes a trashed transcript for good now; NOT_FOUND (`NOT_IN_TRASH`) when it is not there. */
  purgeFromTrash(
    projectKey: string,
    trashId: string,
    options?: StoreOperationOptions,
  ): Promise<TrashedTranscript>;
  /**
   * Deletes for good every trashed transcript of every project whose `purgeAfter` has passed, at
   * most `limit` (default 1,000) a call; how many it deleted. Safe to run from several processes.
   */
  purgeExpiredTrash(options?: StoreOperationOptions & { limit?: number }): Promise<number>;
}
