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
