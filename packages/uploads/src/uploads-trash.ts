import {
  assertSafeId,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  throwIfAborted,
} from "@stowage/core";
import {
  deleteUploadsTrashMarks,
  listUploadsTrashMarks,
  readUploadsTrashMark,
  type UploadsTrashMark,
  uploadsTrashMarkInForce,
  writeUploadsTrashMark,
} from "./expired-uploads.js";
import type { QuotaLedger } from "./quota-ledger.js";
import {
  sessionKeyParts,
  sessionPrefix,
  TRASH_MARKS_ROOT,
  uploadsPrefix,
  uploadsTrashMarkParts,
} from "./upload-keys.js";
import type { SweptUpload } from "./upload-retention.js";

// A session's uploads deleted into the trash: nothing moves (an upload's records and stamps stay
// beside it, as its verification needs); a mark outside the session's tree says since when, and
// by whom, every upload last changed by then is expired. The service then neither lists nor
// serves them, keeps them counted, lists them as expired (its owner's trash), restores one by a
// touch (newer than the mark: live again), and `sweepTrashedUploads` deletes them once their stay
// is over. An upload made after the mark is not touched by it.

// Deletions at once (two processes, two replicas) must leave the later time in force, or an
// earlier mark would hand back what the later deletion reported in the trash. The ObjectStore
// contract's only conditional put is create-only, so no mark is ever overwritten: each deletion
// creates one of its own, under a key nobody else names (`<at>-<random>-<by>.json` in the
// session's folder of marks), and the mark in force is the latest one listed there. Whichever
// put lands last, however slowly, the latest time is in force once its mark is down: a late
// landing adds an older mark beside it, and no order of landing can make an older one win. The
// sweep deletes what the mark in force it read takes, then only the marks it listed with it (that
// time or earlier): a later one, put by a deletion meanwhile, stays with what it takes. An upload
// is deleted only while still as listed, looked at just before the delete.

// A mark's `at` and `by` are in its name (`by` is a safe id, safe inside a key segment), not read
// from its body: a read of the mark in force is one listing, with no GET after it (none that a
// sweep's delete could beat, none to find a damaged body), and what is in force is what is listed.

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

/** What {@link trashSessionUploads} took. */
export interface TrashedSessionUploads {
  /**
   * When they went to the trash: the time of the mark in force once this deletion's was down
   * (another deletion's, when its later mark was down by then).
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

/**
 * The mark a deletion reports once its own is down: the mark in force, when a later deletion's
 * (or one of the same time whose key sorts last) is there too, since that one decides what is in
 * the trash; its own otherwise.
 */
async function markToReport(
  store: ObjectStore,
  owner: Principal,
  sessionId: string,
  own: UploadsTrashMark,
  signal: AbortSignal | undefined,
): Promise<UploadsTrashMark> {
  const inForce = await readUploadsTrashMark(store, owner, sessionId, signal);
  return inForce && inForce.at.getTime() >= own.at.getTime() ? inForce : own;
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
  const own: UploadsTrashMark = { at: new Date(ctx.now()), by };
  await writeUploadsTrashMark(ctx.store, owner, sessionId, own, signal);
  // From here on the mark is down: a crash loses nothing of the deletion, only its report.
  const mark = await markToReport(ctx.store, owner, sessionId, own, signal);
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
  return { trashedAt: mark.at, uploads, bytes };
}

/**
 * Each session with marks, once. A session's marks share its folder's prefix, so they come one
 * after another in key order; any other key under `upload-trash/` (hostile, damaged, another
 * layout) is skipped without a look.
 */
async function* markedSessions(
  store: ObjectStore,
  signal: AbortSignal | undefined,
): AsyncGenerator<{ owner: Principal; sessionId: string }> {
  let previous: string | undefined;
  for await (const item of store.iterate({ prefix: TRASH_MARKS_ROOT, ...withSignal(signal) })) {
    const parts = uploadsTrashMarkParts(item.key);
    if (!parts) continue;
    const folder = item.key.slice(0, item.key.lastIndexOf("/") + 1);
    if (folder === previous) continue;
    previous = folder;
    yield { owner: parts.owner, sessionId: parts.sessionId };
  }
}

/** Deletes the session's uploads `mark` takes, the ledger following; what it deleted. */
async function purgeTakenUploads(
  ctx: UploadsTrashContext,
  owner: Principal,
  sessionId: string,
  mark: UploadsTrashMark,
  signal: AbortSignal | undefined,
): Promise<SweptUpload[]> {
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
  return gone;
}

/** What {@link sweepTrashedUploads} is asked, passed on to each session's sweep. */
interface TrashSweep {
  graceMs: number;
  now: number;
  onSwept: ((uploads: readonly SweptUpload[], by: string) => void | Promise<void>) | undefined;
  signal: AbortSignal | undefined;
}

/** Sweeps one session: what its mark in force takes, once past the grace, then the marks listed with it. */
async function sweepSession(
  ctx: UploadsTrashContext,
  owner: Principal,
  sessionId: string,
  { graceMs, now, onSwept, signal }: TrashSweep,
): Promise<number> {
  const marks = await listUploadsTrashMarks(ctx.store, owner, sessionId, signal);
  const mark = uploadsTrashMarkInForce(marks);
  if (!mark || mark.at.getTime() + graceMs > now) return 0;
  const gone = await purgeTakenUploads(ctx, owner, sessionId, mark, signal);
  // The marks listed with it, all of its time or earlier: what they take, it took. A mark put
  // since (a deletion meanwhile) was not listed and stays in force, with what this sweep left.
  await deleteUploadsTrashMarks(ctx.store, marks, signal);
  if (gone.length > 0) await onSwept?.(gone, mark.by);
  return gone.length;
}

/**
 * Deletes the uploads of every session whose mark in force is older than `graceMs` (those it
 * took, last changed by its time), the ledger following, then the marks it was read among;
 * `onSwept` is told each session's before the next, for an audit. Sessions within their stay are
 * left.
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
  const sweep: TrashSweep = { graceMs, now: ctx.now(), onSwept, signal };
  let swept = 0;
  for await (const { owner, sessionId } of markedSessions(ctx.store, signal)) {
    throwIfAborted(signal, "sweep of trashed uploads");
    swept += await sweepSession(ctx, owner, sessionId, sweep);
  }
  return swept;
}
