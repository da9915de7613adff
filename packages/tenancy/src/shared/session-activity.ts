import {
  assertSafeId,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  StowageError,
} from "@stowage/core";

/** Where every principal's capture/restore activity is kept in the shared store. */
export const SESSION_ACTIVITY_PREFIX = "session-activity/";

/** The longest request id a stored session takes (the session-blob repository's rule). */
const MAX_REQUEST_ID_LENGTH = 255;

/** Whether a stored session was captured (stored) or restored (read back to resume it). */
export type SessionActivityKind = "capture" | "restore";

/**
 * One capture or restore of a stored session: ids, the agent, counts and sizes, never content or
 * keys. The same fields (and names) as the log line each one writes.
 */
export interface SessionActivityEntry {
  sessionId: string;
  requestId: string;
  agent: string;
  /** The agent CLI's version, when the stored session records it. */
  agentVersion?: string;
  fileCount: number;
  /** The session's decompressed size. */
  rawBytes: number;
  /** What storing it added (a capture), or what the stored record holds (a restore). */
  storedBytes: number;
  durationMs: number;
  /** ISO 8601 time it finished. */
  at: string;
}

/** The last capture and the last restore of one request, each null until there is one. */
export interface SessionActivity {
  lastCapture: SessionActivityEntry | null;
  lastRestore: SessionActivityEntry | null;
}

/** One principal's capture/restore activity, per request, in the store every process shares. */
export interface SessionActivityLog {
  /** Records `entry` as the request's last capture or restore (the last write wins). */
  record(kind: SessionActivityKind, entry: SessionActivityEntry, options?: OperationOptions): Promise<void>;
  read(requestId: string, options?: OperationOptions): Promise<SessionActivity>;
  /** Forgets the request's activity: whether there was any. */
  deleteForRequest(requestId: string, options?: OperationOptions): Promise<boolean>;
  /**
   * Forgets every record naming the session, whatever request it was for: how many went. Reads
   * the principal's records one by one (a session's deletion is rare; there is no index by session).
   */
  deleteForSession(sessionId: string, options?: OperationOptions): Promise<number>;
}

const KINDS: readonly SessionActivityKind[] = ["capture", "restore"];

const encode = (entry: SessionActivityEntry) => new TextEncoder().encode(JSON.stringify(entry));

/** A stored entry, checked field by field: a record that is not one is INTEGRITY, naming its key. */
function decode(bytes: Uint8Array, key: string): SessionActivityEntry {
  let value: Partial<Record<keyof SessionActivityEntry, unknown>>;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new StowageError("INTEGRITY", `session activity record ${key} is not JSON`, { details: { key } });
  }
  const strings = ["sessionId", "requestId", "agent", "at"] as const;
  const numbers = ["fileCount", "rawBytes", "storedBytes", "durationMs"] as const;
  const valid =
    typeof value === "object" &&
    value !== null &&
    strings.every((name) => typeof value[name] === "string") &&
    numbers.every((name) => Number.isSafeInteger(value[name]) && (value[name] as number) >= 0) &&
    (value.agentVersion === undefined || typeof value.agentVersion === "string");
  if (!valid) {
    throw new StowageError("INTEGRITY", `session activity record ${key} is not a capture or restore`, {
      details: { key },
    });
  }
  const entry = value as SessionActivityEntry;
  return {
    sessionId: entry.sessionId,
    requestId: entry.requestId,
    agent: entry.agent,
    ...(entry.agentVersion === undefined ? {} : { agentVersion: entry.agentVersion }),
    fileCount: entry.fileCount,
    rawBytes: entry.rawBytes,
    storedBytes: entry.storedBytes,
    durationMs: entry.durationMs,
    at: entry.at,
  };
}

/**
 * The activity of `principal` in `store`: `<prefix><kind>/<id>/<requestId>/<capture|restore>.json`,
 * one object per request and kind, so a capture in one process and a restore in another never
 * overwrite each other's record.
 */
export function sessionActivityOf(
  store: ObjectStore,
  prefix: string,
  principal: Principal,
): SessionActivityLog {
  const namespace = `${prefix}${principal.kind}/${principal.id}/`;
  const keyOf = (requestId: string, kind: SessionActivityKind) => {
    assertSafeId(requestId, "request id", MAX_REQUEST_ID_LENGTH);
    return `${namespace}${requestId}/${kind}.json`;
  };
  async function readOne(requestId: string, kind: SessionActivityKind, options: OperationOptions) {
    const key = keyOf(requestId, kind);
    const bytes = await store.get(key, options);
    return bytes === null ? null : decode(bytes, key);
  }
  return {
    async record(kind, entry, options = {}) {
      if (!KINDS.includes(kind)) {
        throw new StowageError("INVALID_INPUT", `kind must be capture or restore, got ${String(kind)}`);
      }
      await store.put(keyOf(entry.requestId, kind), encode(entry), options);
    },
    async read(requestId, options = {}) {
      const [lastCapture, lastRestore] = await Promise.all(
        KINDS.map((kind) => readOne(requestId, kind, options)),
      );
      return { lastCapture: lastCapture ?? null, lastRestore: lastRestore ?? null };
    },
    async deleteForRequest(requestId, options = {}) {
      let any = false;
      for (const kind of KINDS) {
        const key = keyOf(requestId, kind);
        if ((await store.head(key, options)) === null) continue;
        await store.delete(key, options);
        any = true;
      }
      return any;
    },
    async deleteForSession(sessionId, options = {}) {
      let deleted = 0;
      for await (const item of store.iterate({ ...options, prefix: namespace })) {
        const bytes = await store.get(item.key, options);
        if (bytes === null) continue;
        // A record that does not parse names no session: left for its request's deletion.
        let entry: SessionActivityEntry;
        try {
          entry = decode(bytes, item.key);
        } catch {
          continue;
        }
        if (entry.sessionId !== sessionId) continue;
        await store.delete(item.key, options);
        deleted++;
      }
      return deleted;
    },
  };
}
