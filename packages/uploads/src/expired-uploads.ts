import {
  assertPrincipal,
  assertSafeId,
  describeValue,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  StowageError,
} from "@stowage/core";
import type { QuotaLedger } from "./quota-ledger.js";
import { assertUploadFilename } from "./upload-filename.js";
import {
  sessionKeyParts,
  sessionPrefix,
  uploadKey,
  uploadsTrashMarkKey,
  uploadsTrashMarkParts,
  uploadsTrashMarksPrefix,
} from "./upload-keys.js";

// An upload past the deployment's retention is not deleted when it expires: from its expiry
// (last change + `retentionDays`) the service leaves it out of every listing and refuses its
// downloads, and it waits for its owner to bring it back (a touch: its retention starts again) or
// for the retention sweep, which a deployment with a trash runs `trashDays` later. It stays
// counted in the quota ledger meanwhile: bytes in a trash still take the principal's room.

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A session's uploads deleted into the trash (`trashSessionUploads`): every upload last changed by
 * `at` expired then, `by` whom. Uploads made after it are not touched by it.
 */
export interface UploadsTrashMark {
  at: Date;
  by: string;
}

/** One deletion's mark as stored: its key and what its name says. */
export interface StoredUploadsTrashMark extends UploadsTrashMark {
  key: string;
}

/**
 * Every mark of the session (one per deletion not yet swept), in key order, which is time order.
 * Read from the listing alone, names and no bodies: a key this package did not write there (a
 * damaged or hostile name) is no mark and hides none.
 */
export async function listUploadsTrashMarks(
  store: ObjectStore,
  owner: Principal,
  sessionId: string,
  signal?: AbortSignal,
): Promise<StoredUploadsTrashMark[]> {
  const marks: StoredUploadsTrashMark[] = [];
  const prefix = uploadsTrashMarksPrefix(owner, sessionId);
  for await (const item of store.iterate({ prefix, ...withSignal(signal) })) {
    const parts = uploadsTrashMarkParts(item.key);
    if (parts) marks.push({ key: item.key, at: parts.at, by: parts.by });
  }
  return marks;
}

/** The mark in force among `marks`: the latest; of marks of one time, the one whose key sorts last. */
export function uploadsTrashMarkInForce(
  marks: readonly StoredUploadsTrashMark[],
): StoredUploadsTrashMark | undefined {
  let latest: StoredUploadsTrashMark | undefined;
  for (const mark of marks) {
    const later = latest === undefined || mark.at.getTime() > latest.at.getTime();
    if (later || (mark.at.getTime() === latest!.at.getTime() && mark.key > latest!.key)) latest = mark;
  }
  return latest;
}

/** The session's mark in force, if its uploads were deleted into the trash. */
export async function readUploadsTrashMark(
  store: ObjectStore,
  owner: Principal,
  sessionId: string,
  signal?: AbortSignal,
): Promise<UploadsTrashMark | undefined> {
  const latest = uploadsTrashMarkInForce(await listUploadsTrashMarks(store, owner, sessionId, signal));
  return latest && { at: latest.at, by: latest.by };
}

/**
 * Creates one deletion's mark, beside any other deletion's: its uploads as they are now are in
 * the trash from `at`. The body repeats the name for whoever browses the bucket; nothing reads it.
 */
export async function writeUploadsTrashMark(
  store: ObjectStore,
  owner: Principal,
  sessionId: string,
  mark: UploadsTrashMark,
  signal?: AbortSignal,
): Promise<void> {
  const key = uploadsTrashMarkKey(owner, sessionId, mark.at, mark.by);
  const body = new TextEncoder().encode(JSON.stringify({ at: mark.at.toISOString(), by: mark.by }));
  try {
    await store.put(key, body, { ifNoneMatch: "*", contentType: "application/json", ...withSignal(signal) });
  } catch (err) {
    // The key is new (its random part), so it exists only as this very put: a client's retry of
    // a put whose first attempt landed. Anything else is a failure of the deletion.
    if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
  }
}

/** Deletes these marks, and no other: a mark put since they were listed stays in force. */
export async function deleteUploadsTrashMarks(
  store: ObjectStore,
  marks: readonly StoredUploadsTrashMark[],
  signal?: AbortSignal,
): Promise<void> {
  for (const mark of marks) await store.delete(mark.key, withSignal(signal));
}

/** One upload past retention, or deleted into the trash with its session's uploads, not yet swept. */
export interface ExpiredUpload {
  sessionId: string;
  filename: string;
  size: number;
  lastModified: Date;
  /** When it expired: `lastModified` + the service's `retentionDays`, or when its session's uploads were deleted. */
  expiresAt: Date;
  /** Who deleted the session's uploads, when that (not retention) is why it expired. */
  deletedBy?: string;
}

/** Options of `listExpiredUploads`: one session's, or one upload's (`sessionId` and `filename`). */
export interface ExpiredUploadsOptions extends OperationOptions {
  sessionId?: string;
  filename?: string;
}

/** What the expiry of uploads needs from the service. */
export interface ExpiryContext {
  store: ObjectStore;
  quota: QuotaLedger;
  now: () => number;
  retentionDays: number | undefined;
}

/** Whether the session's mark takes an upload last changed at `lastModified` (made by then). */
const markTakes = (mark: UploadsTrashMark | undefined, lastModified: Date): mark is UploadsTrashMark =>
  mark !== undefined && lastModified.getTime() <= mark.at.getTime();

/**
 * When an upload last changed at `lastModified` expires: its retention's end, or, when its
 * session's uploads were deleted into the trash since it was made, that moment (whichever is
 * first); undefined where uploads are kept and nothing deleted it.
 */
export function uploadExpiry(
  retentionDays: number | undefined,
  lastModified: Date,
  mark?: UploadsTrashMark,
): Date | undefined {
  const retained =
    retentionDays === undefined ? undefined : new Date(lastModified.getTime() + retentionDays * DAY_MS);
  if (!markTakes(mark, lastModified)) return retained;
  return retained !== undefined && retained.getTime() < mark.at.getTime() ? retained : mark.at;
}

/** Whether an upload last changed at `lastModified` is past retention (or deleted into the trash) at `now` (ms). */
export function isExpiredUpload(
  ctx: Pick<ExpiryContext, "retentionDays">,
  lastModified: Date,
  now: number,
  mark?: UploadsTrashMark,
) {
  const expiry = uploadExpiry(ctx.retentionDays, lastModified, mark);
  return expiry !== undefined && expiry.getTime() <= now;
}

/** NOT_FOUND (`UPLOAD_EXPIRED`): an upload past retention, waiting for its owner or the sweep. */
export function expiredUpload(
  ctx: Pick<ExpiryContext, "retentionDays">,
  filename: string,
  sessionId: string,
  lastModified: Date,
  mark?: UploadsTrashMark,
): StowageError {
  const expiresAt = uploadExpiry(ctx.retentionDays, lastModified, mark) ?? lastModified;
  const why =
    markTakes(mark, lastModified) && expiresAt.getTime() === mark.at.getTime()
      ? `the session's uploads were deleted by ${mark.by}`
      : "the deployment's retention";
  return new StowageError(
    "NOT_FOUND",
    `upload ${describeValue(filename)} of session ${describeValue(sessionId)} expired at ${expiresAt.toISOString()} (${why}); its owner can restore it until the sweep deletes it`,
    { reason: "UPLOAD_EXPIRED", details: { filename, expiresAt: expiresAt.toISOString() } },
  );
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

/** An expired upload as listed, from its key's parts and what the store says of it. */
function expiredOf(
  retentionDays: number | undefined,
  sessionId: string,
  filename: string,
  info: { size: number; lastModified: Date },
  mark: UploadsTrashMark | undefined,
): ExpiredUpload {
  const { size, lastModified } = info;
  const expiresAt = uploadExpiry(retentionDays, lastModified, mark)!;
  const byMark = markTakes(mark, lastModified) && expiresAt.getTime() === mark.at.getTime();
  return { sessionId, filename, size, lastModified, expiresAt, ...(byMark ? { deletedBy: mark.by } : {}) };
}

/**
 * Every upload of `principal`'s sessions that is past retention, in key order; of one session
 * with `sessionId`, and one upload (a HEAD, no listing) with `filename` too.
 */
export async function listExpiredUploads(
  ctx: ExpiryContext,
  principal: Principal,
  { sessionId, filename, signal }: ExpiredUploadsOptions = {},
): Promise<ExpiredUpload[]> {
  assertPrincipal(principal);
  if (sessionId !== undefined) assertSafeId(sessionId, "sessionId");
  if (filename !== undefined) {
    if (sessionId === undefined) {
      throw new StowageError("INVALID_INPUT", "listExpiredUploads: a filename needs its sessionId");
    }
    assertUploadFilename(filename);
  }
  const { retentionDays } = ctx;
  const now = ctx.now();
  const owner: Principal = { kind: principal.kind, id: principal.id };
  // Each session's mark, read once.
  const marks = new Map<string, Promise<UploadsTrashMark | undefined>>();
  const markOf = (id: string) => {
    if (!marks.has(id)) marks.set(id, readUploadsTrashMark(ctx.store, owner, id, signal));
    return marks.get(id)!;
  };
  if (sessionId !== undefined && filename !== undefined) {
    const mark = await markOf(sessionId);
    const info = await ctx.store.head(uploadKey(owner, sessionId, filename), withSignal(signal));
    return info && isExpiredUpload(ctx, info.lastModified, now, mark)
      ? [expiredOf(retentionDays, sessionId, filename, info, mark)]
      : [];
  }
  const expired: ExpiredUpload[] = [];
  const prefix =
    sessionId === undefined ? `sessions/${owner.kind}/${owner.id}/` : sessionPrefix(owner, sessionId);
  for await (const item of ctx.store.iterate({ prefix, ...withSignal(signal) })) {
    const parts = sessionKeyParts(item.key);
    if (parts?.place.folder !== "uploads") continue;
    const mark = await markOf(parts.sessionId);
    if (!isExpiredUpload(ctx, item.lastModified, now, mark)) continue;
    expired.push(expiredOf(retentionDays, parts.sessionId, parts.place.filename, item, mark));
  }
  return expired;
}

/** The key of `principal`'s upload and what the store says of it now, if it is past retention. */
async function currentlyExpired(
  ctx: ExpiryContext,
  principal: Principal,
  sessionId: string,
  filename: string,
  signal?: AbortSignal,
) {
  assertPrincipal(principal);
  assertSafeId(sessionId, "sessionId");
  assertUploadFilename(filename);
  const owner: Principal = { kind: principal.kind, id: principal.id };
  const key = uploadKey(owner, sessionId, filename);
  const mark = await readUploadsTrashMark(ctx.store, owner, sessionId, signal);
  const info = await ctx.store.head(key, withSignal(signal));
  const expired = info !== null && isExpiredUpload(ctx, info.lastModified, ctx.now(), mark);
  return { owner, key, info: expired ? info : null };
}

/**
 * Brings an upload past retention back: its last change becomes now (the store's `touch`, bytes
 * untouched), so its retention starts again. False when there is no such upload, or it is not
 * past retention (restored or uploaded again since, swept, never there).
 */
export async function restoreExpiredUpload(
  ctx: ExpiryContext,
  principal: Principal,
  sessionId: string,
  filename: string,
  { signal }: OperationOptions = {},
): Promise<boolean> {
  const { key, info } = await currentlyExpired(ctx, principal, sessionId, filename, signal);
  if (!info) return false;
  return ctx.store.touch(key, withSignal(signal));
}

/**
 * Deletes an upload past retention now and forgets it in the ledger; its size, or null when
 * there is no such upload or it is not past retention. As the sweep does, it looks just before
 * the delete: an upload made again under the same name since is younger and stays.
 */
export async function purgeExpiredUpload(
  ctx: ExpiryContext,
  principal: Principal,
  sessionId: string,
  filename: string,
  { signal }: OperationOptions = {},
): Promise<number | null> {
  const { owner, key, info } = await currentlyExpired(ctx, principal, sessionId, filename, signal);
  if (!info) return null;
  await ctx.store.delete(key, withSignal(signal));
  await ctx.quota.forget(sessionPrefix(owner, sessionId), key, withSignal(signal));
  return info.size;
}
