import {
  assertPrincipal,
  assertSafeId,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  throwIfAborted,
} from "@stowage/core";
import { readUploadsTrashMark, writeUploadsTrashMark } from "./expired-uploads.js";
import type { QuotaLedger } from "./quota-ledger.js";
import { sessionKeyParts, sessionPrefix, uploadsPrefix, uploadsTrashMarkKey } from "./upload-keys.js";
import type { SweptUpload } from "./upload-retention.js";

// A session's uploads deleted into the trash: nothing moves (an upload's records and stamps stay
// beside it, as its verification needs); a mark outside the session's tree says since when, and
// by whom, every upload last changed by then is expired. The service then neither lists nor
// serves them, keeps them counted, lists them as expired (its owner's trash), restores one by a
// touch (newer than the mark: live again), and `sweepTrashedUploads` deletes them once their stay
// is over. An upload made after the mark is not touched by it.

const MARKS_ROOT = "upload-trash/";
const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

/** What {@link trashSessionUploads} took. */
export interface TrashedSessionUploads {
  /** When they went to the trash: the mark's time. */
  trashedAt: Date;
  uploads: number;
  bytes: number;
}

/** What the trash of session uploads needs from the service. */
export interface UploadsTrashContext {
  store: ObjectStore;
  quota: QuotaLedger;
  now: () => number;
}

/** Marks the session's uploads as they are now as deleted into the trash, by `by`; what it took. */
export async function trashSessionUploads(
  ctx: UploadsTrashContext,
  owner: Principal,
  sessionId: string,
  by: string,
  { signal }: OperationOptions = {},
): Promise<TrashedSessionUploads> {
  // One rule for who deleted something, as every deletion of a deployment checks it.
  assertSafeId(by, "by");
  const trashedAt = new Date(ctx.now());
  await writeUploadsTrashMark(ctx.store, owner, sessionId, { at: trashedAt, by }, signal);
  let uploads = 0;
  let bytes = 0;
  for await (const item of ctx.store.iterate({
    prefix: uploadsPrefix(owner, sessionId),
    ...withSignal(signal),
  })) {
    if (sessionKeyParts(item.key)?.place.folder !== "uploads") continue;
    if (item.lastModified.getTime() > trashedAt.getTime()) continue;
    uploads += 1;
    bytes += item.size;
  }
  return { trashedAt, uploads, bytes };
}

/** The owner and session a mark's key names, or undefined for any other key. */
function markedSession(key: string): { owner: Principal; sessionId: string } | undefined {
  const [kind, id, name, ...rest] = key.slice(MARKS_ROOT.length).split("/");
  if (rest.length > 0 || (kind !== "user" && kind !== "org") || !name?.endsWith(".json")) return undefined;
  const sessionId = name.slice(0, -".json".length);
  try {
    const owner: Principal = { kind, id: id! };
    assertPrincipal(owner);
    assertSafeId(sessionId, "sessionId");
    return uploadsTrashMarkKey(owner, sessionId) === key ? { owner, sessionId } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Deletes the uploads of every session whose mark is older than `graceMs` (those it took, last
 * changed by its time), the ledger following, then the mark; `onSwept` is told each session's
 * before the next, for an audit. Sessions within their stay are left.
 */
export async function sweepTrashedUploads(
  ctx: UploadsTrashContext,
  {
    graceMs,
    onSwept,
    signal,
  }: OperationOptions & {
    graceMs: number;
    onSwept?: (uploads: readonly SweptUpload[], by: string) => void | Promise<void>;
  },
): Promise<number> {
  const now = ctx.now();
  let swept = 0;
  for await (const item of ctx.store.iterate({ prefix: MARKS_ROOT, ...withSignal(signal) })) {
    const marked = markedSession(item.key);
    if (!marked) continue;
    throwIfAborted(signal, "sweep of trashed uploads");
    const { owner, sessionId } = marked;
    const mark = await readUploadsTrashMark(ctx.store, owner, sessionId, signal);
    if (!mark || mark.at.getTime() + graceMs > now) continue;
    const gone: SweptUpload[] = [];
    const scope = sessionPrefix(owner, sessionId);
    for await (const object of ctx.store.iterate({
      prefix: uploadsPrefix(owner, sessionId),
      ...withSignal(signal),
    })) {
      const place = sessionKeyParts(object.key)?.place;
      if (place?.folder !== "uploads" || object.lastModified.getTime() > mark.at.getTime()) continue;
      await ctx.store.delete(object.key, withSignal(signal));
      await ctx.quota.forget(scope, object.key, withSignal(signal));
      gone.push({
        principal: owner,
        sessionId,
        filename: place.filename,
        key: object.key,
        size: object.size,
        lastModified: object.lastModified,
      });
    }
    await ctx.store.delete(item.key, withSignal(signal));
    if (gone.length > 0) await onSwept?.(gone, mark.by);
    swept += gone.length;
  }
  return swept;
}
