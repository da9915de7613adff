import {
  assertPrincipal,
  assertSafeId,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  throwIfAborted,
} from "@stowage/core";
import { readUploadsTrashMark, type UploadsTrashMark, writeUploadsTrashMark } from "./expired-uploads.js";
import type { QuotaLedger } from "./quota-ledger.js";
import { sessionKeyParts, sessionPrefix, uploadsPrefix, uploadsTrashMarkKey } from "./upload-keys.js";
import type { SweptUpload } from "./upload-retention.js";

// A session's uploads deleted into the trash: nothing moves (an upload's records and stamps stay
// beside it, as its verification needs); a mark outside the session's tree says since when, and
// by whom, every upload last changed by then is expired. The service then neither lists nor
// serves them, keeps them counted, lists them as expired (its owner's trash), restores one by a
// touch (newer than the mark: live again), and `sweepTrashedUploads` deletes them once their stay
// is over. An upload made after the mark is not touched by it.

// Deletions at once (two processes, two replicas) share one mark, and a mark has no version to
// put against (the ObjectStore contract's only conditional put is create-only): the later time
// must win, or an earlier mark put last would hand back what the later deletion reported in the
// trash. So a deletion never puts a mark older than the one there, and looks again once it has
// counted, putting its own back if an older one (or none: a sweep that took the older one) landed
// meanwhile. Left open: an older mark whose put lands after the later deletion has returned (a
// put slower than a whole deletion); the sweep likewise deletes a mark only while it is the one it
// read, and an upload only while it is still as listed, looked at just before the delete.

const MARKS_ROOT = "upload-trash/";
/** How many times a deletion puts its mark back after finding an older one (or none) there. */
const MARK_REPAIRS = 3;
const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});
const sameMark = (a: UploadsTrashMark, b: UploadsTrashMark) =>
  a.at.getTime() === b.at.getTime() && a.by === b.by;

/** What {@link trashSessionUploads} took. */
export interface TrashedSessionUploads {
  /**
   * When they went to the trash: the mark's time (another deletion's, when its later mark was
   * there first).
   */
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

/** The mark in force once `mark` is put, unless one as late or later is there already. */
async function putUnlessLater(
  store: ObjectStore,
  owner: Principal,
  sessionId: string,
  mark: UploadsTrashMark,
  signal: AbortSignal | undefined,
): Promise<UploadsTrashMark> {
  const present = await readUploadsTrashMark(store, owner, sessionId, signal);
  if (present && present.at.getTime() >= mark.at.getTime()) return present;
  await writeUploadsTrashMark(store, owner, sessionId, mark, signal);
  return mark;
}

/** Puts `mark` back while an older mark (or none) is there; see the note at the top. */
async function keepMark(
  store: ObjectStore,
  owner: Principal,
  sessionId: string,
  mark: UploadsTrashMark,
  signal: AbortSignal | undefined,
): Promise<void> {
  for (let repair = 0; repair < MARK_REPAIRS; repair++) {
    const present = await readUploadsTrashMark(store, owner, sessionId, signal);
    if (present && present.at.getTime() >= mark.at.getTime()) return;
    await writeUploadsTrashMark(store, owner, sessionId, mark, signal);
  }
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
  const mark = await putUnlessLater(ctx.store, owner, sessionId, { at: new Date(ctx.now()), by }, signal);
  // From here on the mark is down: a crash loses nothing of the deletion, only its report.
  let uploads = 0;
  let bytes = 0;
  for await (const item of ctx.store.iterate({
    prefix: uploadsPrefix(owner, sessionId),
    ...withSignal(signal),
  })) {
    if (sessionKeyParts(item.key)?.place.folder !== "uploads") continue;
    if (item.lastModified.getTime() > mark.at.getTime()) continue;
    uploads += 1;
    bytes += item.size;
  }
  await keepMark(ctx.store, owner, sessionId, mark, signal);
  return { trashedAt: mark.at, uploads, bytes };
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
      // Looked at again just before the delete: restored (touched) since the listing, it is live;
      // gone, another sweep purged it and reports it, so it is neither deleted nor reported twice.
      const current = await ctx.store.head(object.key, withSignal(signal));
      if (!current || current.size !== object.size || current.lastModified.getTime() > mark.at.getTime()) {
        continue;
      }
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
    // A deletion since the mark was read put a later one, which takes uploads this sweep left.
    const still = await readUploadsTrashMark(ctx.store, owner, sessionId, signal);
    if (still && sameMark(still, mark)) await ctx.store.delete(item.key, withSignal(signal));
    if (gone.length > 0) await onSwept?.(gone, mark.by);
    swept += gone.length;
  }
  return swept;
}
