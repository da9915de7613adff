import { describeValue, type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import { SHARED_LAYOUT } from "../shared/shared-layout.js";

/**
 * What can be in a trash, by kind: a deleted `session` (every store of it), a `storedSession`
 * that expired (every request's capture of one session id), an `upload`, a `blob` garbage
 * collection took, and an Agent SDK `transcript`. See the package README's table.
 */
export type TrashKind = "session" | "storedSession" | "upload" | "blob" | "transcript";

/** One thing in a principal's trash, as listed. */
export interface TrashedThing {
  kind: TrashKind;
  /**
   * The session id (of a `storedSession`: the id its captures were stored under; of an `upload`:
   * `<sessionId>/<filename>`; of a `blob`: its SHA-256; of a `transcript`, an Agent SDK
   * SessionStore's: `<projectKey>/<trashId>`).
   */
  id: string;
  /** ISO 8601 time it was deleted (went to the trash). */
  trashedAt: string;
  /** ISO 8601 time after which a sweep purges it for good. */
  purgeAfter: string;
  /**
   * Who deleted it (`key:<id>`, `operator`, `cli`; `ttl` for a stored session that expired,
   * `retention` for an upload past the deployment's retention).
   */
  by: string;
  /**
   * Bytes it still holds, counted against its owner's storage until it is purged: its uploads
   * (still in the quota ledger), its latest stored session, its threads and hot state, its LangGraph
   * thread and its OpenAI Agents history (not its session file).
   */
  bytes: number;
}

/** A trash entry as stored: what is listed, and the stay in the trash it belongs to. */
export interface TrashEntry extends TrashedThing {
  trashId: string;
}

/** Who wins when a restore and a purge of one stay in the trash meet: the first written. */
export interface TrashDecision {
  action: "restore" | "purge";
  at: string;
  /** Whether this call wrote it (false: another process decided first). */
  mine: boolean;
}

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

function decodeJson(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `trash/user/alice/`: a principal's trash below the shared store's. */
export const trashRootOf = (namespace: string) => `${SHARED_LAYOUT.trash}${namespace}/`;

/**
 * `trash/<kind>/<id>/<sessionId>/<trashId>.json`: one object per stay in the trash, so two
 * deletions of one session at once each write their own and never overwrite another's; the
 * session's registration names the one that counts.
 */
export const entryKeyOf = (namespace: string, sessionId: string, trashId: string) =>
  `${trashRootOf(namespace)}${sessionId}/${trashId}.json`;

/** Beside the entry: the one decision (restore or purge) about this stay, written create-only. */
export const decisionKeyOf = (entryKey: string) => `${entryKey.slice(0, -".json".length)}.decision`;

/** The parts of an entry key (`trash/user/alice/<sessionId>/<trashId>.json`), or undefined. */
export function parseEntryKey(
  key: string,
): { kind: "user" | "org"; id: string; sessionId: string; trashId: string } | undefined {
  const match = /^trash\/(user|org)\/([^/]+)\/([^/]+)\/([^/]+)\.json$/.exec(key);
  if (!match) return undefined;
  return { kind: match[1] as "user" | "org", id: match[2]!, sessionId: match[3]!, trashId: match[4]! };
}

export async function writeEntry(
  store: ObjectStore,
  key: string,
  entry: TrashEntry,
  options: OperationOptions,
): Promise<void> {
  await store.put(key, encode(entry), { ...options, ifNoneMatch: "*", contentType: "application/json" });
}

/** The entry at `key`, or null when it is gone or damaged (a damaged one is never acted on). */
export async function readEntry(
  store: ObjectStore,
  key: string,
  options: OperationOptions,
): Promise<TrashEntry | null> {
  const bytes = await store.get(key, options);
  const value = bytes === null ? undefined : decodeJson(bytes);
  if (value === undefined) return null;
  const strings = ["id", "trashedAt", "purgeAfter", "by", "trashId"] as const;
  if (value.kind !== "session" || !strings.every((name) => typeof value[name] === "string")) return null;
  const bytesHeld = value.bytes;
  return {
    kind: "session",
    id: value.id as string,
    trashedAt: value.trashedAt as string,
    purgeAfter: value.purgeAfter as string,
    by: value.by as string,
    trashId: value.trashId as string,
    bytes: Number.isSafeInteger(bytesHeld) && (bytesHeld as number) >= 0 ? (bytesHeld as number) : 0,
  };
}

/**
 * Decides `action` for the stay whose entry is `entryKey`, unless another process decided first:
 * the decision is written create-only, so of a restore and a purge racing exactly one wins
 * (on every backend whose create-only puts are atomic: fs, PostgreSQL, memory, S3 with
 * conditional writes). Returns the decision that stands.
 */
export async function decide(
  store: ObjectStore,
  entryKey: string,
  action: TrashDecision["action"],
  options: OperationOptions,
): Promise<TrashDecision> {
  const at = new Date().toISOString();
  try {
    await store.put(decisionKeyOf(entryKey), encode({ action, at }), { ...options, ifNoneMatch: "*" });
    return { action, at, mine: true };
  } catch (err) {
    if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
  }
  const standing = await readDecision(store, entryKey, options);
  // Gone between the two reads: the other process finished; what it decided is over.
  return standing ?? { action, at, mine: false };
}

export async function readDecision(
  store: ObjectStore,
  entryKey: string,
  options: OperationOptions,
): Promise<TrashDecision | null> {
  const bytes = await store.get(decisionKeyOf(entryKey), options);
  const value = bytes === null ? undefined : decodeJson(bytes);
  if (value === undefined) return null;
  const action = value.action === "restore" || value.action === "purge" ? value.action : "purge";
  return { action, at: typeof value.at === "string" ? value.at : new Date(0).toISOString(), mine: false };
}

/** Removes a stay's entry, then its decision: what a finished restore or purge leaves last. */
export async function removeEntry(store: ObjectStore, entryKey: string, options: OperationOptions) {
  await store.delete(entryKey, options);
  await store.delete(decisionKeyOf(entryKey), options);
}

const TRASH_KINDS: readonly TrashKind[] = ["session", "storedSession", "upload", "blob", "transcript"];

/** INVALID_INPUT unless `kind` is one the trash holds. */
export function assertTrashKind(kind: unknown): asserts kind is TrashKind {
  if (!TRASH_KINDS.includes(kind as TrashKind)) {
    throw new StowageError(
      "INVALID_INPUT",
      `trash kind must be session, storedSession, upload, blob or transcript, got ${describeValue(kind)}`,
      { reason: "UNKNOWN_KIND" },
    );
  }
}
