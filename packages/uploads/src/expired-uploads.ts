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
import { sessionKeyParts, sessionPrefix, uploadKey } from "./upload-keys.js";

// An upload past the deployment's retention is not deleted when it expires: from its expiry
// (last change + `retentionDays`) the service leaves it out of every listing and refuses its
// downloads, and it waits for its owner to bring it back (a touch: its retention starts again) or
// for the retention sweep, which a deployment with a trash runs `trashDays` later. It stays
// counted in the quota ledger meanwhile: bytes in a trash still take the principal's room.

const DAY_MS = 24 * 60 * 60 * 1000;

/** One upload past retention, not yet swept. */
export interface ExpiredUpload {
  sessionId: string;
  filename: string;
  size: number;
  lastModified: Date;
  /** When it expired: `lastModified` + the service's `retentionDays`. */
  expiresAt: Date;
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

/** When an upload last changed at `lastModified` expires; undefined where uploads are kept. */
export function uploadExpiry(retentionDays: number | undefined, lastModified: Date): Date | undefined {
  return retentionDays === undefined ? undefined : new Date(lastModified.getTime() + retentionDays * DAY_MS);
}

/** Whether an upload last changed at `lastModified` is past retention at `now` (ms). */
export function isExpiredUpload(ctx: Pick<ExpiryContext, "retentionDays">, lastModified: Date, now: number) {
  const expiry = uploadExpiry(ctx.retentionDays, lastModified);
  return expiry !== undefined && expiry.getTime() <= now;
}

/** NOT_FOUND (`UPLOAD_EXPIRED`): an upload past retention, waiting for its owner or the sweep. */
export function expiredUpload(
  ctx: Pick<ExpiryContext, "retentionDays">,
  filename: string,
  sessionId: string,
  lastModified: Date,
): StowageError {
  const expiresAt = uploadExpiry(ctx.retentionDays, lastModified) ?? lastModified;
  return new StowageError(
    "NOT_FOUND",
    `upload ${describeValue(filename)} of session ${describeValue(sessionId)} expired at ${expiresAt.toISOString()} (the deployment's retention); its owner can restore it until the sweep deletes it`,
    { reason: "UPLOAD_EXPIRED", details: { filename, expiresAt: expiresAt.toISOString() } },
  );
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

/** An expired upload as listed, from its key's parts and what the store says of it. */
function expiredOf(
  retentionDays: number,
  sessionId: string,
  filename: string,
  info: { size: number; lastModified: Date },
): ExpiredUpload {
  const { size, lastModified } = info;
  return { sessionId, filename, size, lastModified, expiresAt: uploadExpiry(retentionDays, lastModified)! };
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
  if (retentionDays === undefined) return [];
  const now = ctx.now();
  const owner: Principal = { kind: principal.kind, id: principal.id };
  if (sessionId !== undefined && filename !== undefined) {
    const info = await ctx.store.head(uploadKey(owner, sessionId, filename), withSignal(signal));
    return info && isExpiredUpload(ctx, info.lastModified, now)
      ? [expiredOf(retentionDays, sessionId, filename, info)]
      : [];
  }
  const expired: ExpiredUpload[] = [];
  const prefix =
    sessionId === undefined ? `sessions/${owner.kind}/${owner.id}/` : sessionPrefix(owner, sessionId);
  for await (const item of ctx.store.iterate({ prefix, ...withSignal(signal) })) {
    const parts = sessionKeyParts(item.key);
    if (parts?.place.folder !== "uploads" || !isExpiredUpload(ctx, item.lastModified, now)) continue;
    expired.push(expiredOf(retentionDays, parts.sessionId, parts.place.filename, item));
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
  const info = await ctx.store.head(key, withSignal(signal));
  const expired = info !== null && isExpiredUpload(ctx, info.lastModified, ctx.now());
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
