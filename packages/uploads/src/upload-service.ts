import {
  assertPrincipal,
  assertSafeId,
  assertSha256Hex,
  compareUtf8,
  consoleLogger,
  describeValue,
  type Logger,
  mapConcurrent,
  type ObjectInfo,
  type ObjectStore,
  type Principal,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import {
  deleteUploadsTrashMarks,
  expiredUpload,
  isExpiredUpload,
  listExpiredUploads,
  listUploadsTrashMarks,
  purgeExpiredUpload,
  readUploadsTrashMark,
  restoreExpiredUpload,
  uploadExpiry,
} from "./expired-uploads.js";
import { formatSize } from "./format-size.js";
import { createMemoryQuotaLedger } from "./memory-quota-ledger.js";
import {
  type QuotaLedger,
  type QuotaReservation,
  type QuotaUsageSource,
  usageSourceFromStore,
} from "./quota-ledger.js";
import { sweepRevokedGrants } from "./revoked-grants.js";
import { assertUploadFilename } from "./upload-filename.js";
import { sessionKeyParts, sessionPrefix, uploadKey, uploadRecordsPrefix } from "./upload-keys.js";
import { checkUpload, DEFAULT_UPLOAD_POLICY, type UploadPolicy } from "./upload-policy.js";
import { createUploadRetention } from "./upload-retention.js";
import type {
  DownloadGrant,
  SessionExists,
  UploadInfo,
  UploadRequest,
  UploadService,
} from "./upload-service-types.js";
import {
  createUploadVerifier,
  type DirectUploadGrant,
  type UploadLocation,
  type UploadVerdict,
  type UploadVerifier,
} from "./upload-verification.js";
import { sweepTrashedUploads, trashSessionUploads } from "./uploads-trash.js";

/** Lifetime of an upload URL unless set: 15 minutes, as the design document says. */
const DEFAULT_UPLOAD_URL_SECONDS = 900;
/** Lifetime of a download URL unless set: 1 hour, as the design document says. */
const DEFAULT_DOWNLOAD_URL_SECONDS = 3600;
/** Longest lifetime of a signed URL: 7 days, what S3 (SigV4) and core's stores allow. */
const MAX_URL_SECONDS = 7 * 24 * 3600;

/** Options of {@link createUploadService}. */
export interface UploadServiceOptions {
  /**
   * Where uploads live: any ObjectStore with direct upload and download URLs (the S3 store of
   * `@stowage/storage-s3`, the file-system store of `@stowage/storage-fs` with `directUrls`).
   * Where it declares `capabilities.directUploadVerifiesSha256: false` (Ceph RGW 16), the
   * service checks every upload's bytes itself; see `completeUpload`.
   */
  store: ObjectStore;
  /**
   * Whether a principal has a session (your sessions table, looked up in the principal's own
   * namespace). The service never authenticates: its caller passes the principal it authenticated.
   */
  sessionExists: SessionExists;
  /** Default: the design document's policy (`createUploadPolicy()`). */
  policy?: UploadPolicy;
  /** Default: a {@link createMemoryQuotaLedger} (race-free within this process only). */
  quota?: QuotaLedger;
  /** Upload URL lifetime in seconds; default 900 (15 minutes). */
  uploadExpiresInSeconds?: number;
  /** Download URL lifetime in seconds; default 3600 (1 hour). */
  downloadExpiresInSeconds?: number;
  /** Where refused uploads are reported; default `consoleLogger`. */
  logger?: Logger;
  /** Clock in ms (URL expiry, the records' clean-up, the default ledger's); default `Date.now`. */
  now?: () => number;
  /**
   * The deployment's retention (what its sweep passes `sweepUploads` as `olderThanDays`): each
   * listed upload then reports `expiresAt`, its last change plus this many days. Default: none
   * (uploads are kept until deleted, and listed without an expiry).
   */
  retentionDays?: number;
}

function invalidOption(message: string): StowageError {
  return new StowageError("INVALID_INPUT", `createUploadService: ${message}`);
}

function lifetime(what: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_URL_SECONDS) {
    throw invalidOption(
      `${what} must be an integer from 1 to ${MAX_URL_SECONDS}, got ${describeValue(value)}`,
    );
  }
  return value;
}

function validateOptions(options: UploadServiceOptions): void {
  if (typeof options?.sessionExists !== "function") {
    // Until the caller authenticated, this was `auth: { authenticate, sessionExists }`.
    const former = typeof options === "object" && options !== null && "auth" in options;
    throw invalidOption(
      former
        ? "auth is gone: authenticate the caller yourself and pass sessionExists(principal, sessionId)"
        : `sessionExists must be a function (principal, sessionId) → boolean, got ${describeValue(options?.sessionExists)}`,
    );
  }
  const { store } = options;
  if (!store?.capabilities?.directUpload || !store.capabilities.directDownload) {
    throw invalidOption(`store ${describeValue(store?.name)} must support direct upload and download URLs`);
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw invalidOption(`now must be a function, got ${describeValue(options.now)}`);
  }
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

/** Files of a listing verified at once. */
const SETTLE_CONCURRENCY = 4;

/**
 * The usage a ledger counts: every object under the session prefix except the service's own
 * records, which are bookkeeping, not storage the session asked for.
 */
function uploadUsageSource(store: ObjectStore): QuotaUsageSource {
  const inner = usageSourceFromStore(store);
  return {
    async *list(prefix, options) {
      for await (const item of inner.list(prefix, options)) {
        if (sessionKeyParts(item.key)?.place.folder !== "records") yield item;
      }
    },
    head: (key, options) => inner.head(key, options),
  };
}

function infoOf(
  ctx: Pick<ServiceContext, "retentionDays">,
  filename: string,
  object: { size: number; lastModified: Date },
): UploadInfo {
  const expiresAt = uploadExpiry(ctx.retentionDays, object.lastModified);
  return {
    filename,
    size: object.size,
    sizeFormatted: formatSize(object.size),
    lastModified: object.lastModified,
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

/** FORBIDDEN (`UPLOAD_REVOKED`): what was written through a URL the session's deletion revoked. */
function revokedUpload(filename: string, sessionId: string): StowageError {
  return new StowageError(
    "FORBIDDEN",
    `upload ${describeValue(filename)} came through a URL revoked when the uploads of session ${describeValue(sessionId)} were deleted; it was deleted`,
    { reason: "UPLOAD_REVOKED", details: { filename } },
  );
}

/** A verdict as the caller of one file sees it: the object, or the error that says why not. */
function verifiedObject(verdict: UploadVerdict, filename: string, sessionId: string): ObjectInfo {
  if (verdict.state === "verified") return verdict.info;
  if (verdict.state === "revoked") throw revokedUpload(filename, sessionId);
  if (verdict.state === "refused") {
    throw new StowageError(
      "INTEGRITY",
      `upload ${describeValue(filename)} does not match what its URL bound (${verdict.reason}); it was deleted`,
      { reason: "UPLOAD_MISMATCH", details: { filename, mismatch: verdict.reason } },
    );
  }
  throw new StowageError(
    "NOT_FOUND",
    `upload ${describeValue(filename)} does not exist in session ${describeValue(sessionId)}`,
    { reason: "UPLOAD_NOT_FOUND" },
  );
}

/** What the service's operations share, built once by {@link createUploadService}. */
interface ServiceContext {
  store: ObjectStore;
  sessionExists: SessionExists;
  policy: UploadPolicy;
  quota: QuotaLedger;
  verifier: UploadVerifier;
  source: QuotaUsageSource;
  now: () => number;
  uploadSeconds: number;
  retentionDays: number | undefined;
}

/**
 * `principal`, after checking that it has the session. An unknown session and another
 * principal's are the same NOT_FOUND: whether a session exists elsewhere never leaks.
 */
async function authorize(
  ctx: ServiceContext,
  principal: unknown,
  sessionId: unknown,
  signal?: AbortSignal,
): Promise<Principal> {
  if (principal === undefined || principal === null) {
    throw new StowageError("UNAUTHORIZED", "no authenticated principal: authenticate the caller first");
  }
  assertPrincipal(principal);
  assertSafeId(sessionId, "sessionId");
  throwIfAborted(signal, "authorize");
  const caller: Principal = { kind: principal.kind, id: principal.id };
  const exists = await ctx.sessionExists(caller, sessionId, withSignal(signal));
  if (typeof exists !== "boolean") {
    throw new StowageError(
      "INTERNAL",
      `sessionExists returned ${describeValue(exists)} for ${describeValue(sessionId)}, not a boolean`,
    );
  }
  if (!exists) {
    throw new StowageError("NOT_FOUND", `no session ${describeValue(sessionId)}`, {
      reason: "SESSION_NOT_FOUND",
    });
  }
  return caller;
}

function locate(owner: Principal, sessionId: string, filename: string): UploadLocation {
  return {
    scope: sessionPrefix(owner, sessionId),
    key: uploadKey(owner, sessionId, filename),
    recordsPrefix: uploadRecordsPrefix(owner, sessionId, filename),
  };
}

/** Whether the session's upload URLs were ever revoked: then records (or stamps) vouch for every upload. */
async function wasRevoked(ctx: ServiceContext, scope: string, signal?: AbortSignal): Promise<boolean> {
  return (await ctx.quota.revocations(scope, withSignal(signal))) > 0;
}

/**
 * Whether a revocation (a deletion of the session's uploads) happened since `before` was read:
 * then what was verified meanwhile was, or is about to be, deleted by it, and the keys committed
 * are forgotten again, so that a commit landing after the deletion's own bookkeeping does not
 * leave the ledger counting bytes that are gone.
 */
async function overtaken(
  ctx: ServiceContext,
  scope: string,
  before: number,
  committed: readonly string[],
  signal?: AbortSignal,
): Promise<boolean> {
  if ((await ctx.quota.revocations(scope, withSignal(signal))) === before) return false;
  for (const key of committed) await ctx.quota.forget(scope, key, withSignal(signal));
  return true;
}

/**
 * Checks the file and the quota, reserves its size, signs a URL and records what it binds. The
 * URL is handed out only if, once its record is stored, the session still exists and no
 * revocation happened since the reservation: a deletion revokes before it lists what to delete,
 * so a URL it did not revoke has a record the deletion found (and deleted), and one it did is
 * refused here (CONFLICT `UPLOADS_REVOKED`) and its reservation given back.
 */
/**
 * CONFLICT (`UPLOAD_IN_TRASH`) when `key` holds an upload past retention or deleted with its
 * session's uploads: it waits in its owner's trash, and an upload under its name would overwrite
 * it, losing it silently.
 */
async function refuseOverTrashedUpload(
  ctx: ServiceContext,
  owner: Principal,
  key: string,
  sessionId: string,
  filename: string,
  signal?: AbortSignal,
): Promise<void> {
  // The mark is read only when something is at the key: a new file's grant costs one HEAD.
  const info = await ctx.store.head(key, withSignal(signal));
  if (!info) return;
  const mark = await readUploadsTrashMark(ctx.store, owner, sessionId, signal);
  if (!isExpiredUpload(ctx, info.lastModified, ctx.now(), mark)) return;
  throw new StowageError(
    "CONFLICT",
    `upload ${describeValue(filename)} of session ${describeValue(sessionId)} is in its owner's trash (past the deployment's retention, or deleted with the session's uploads); restore or purge it first, or upload under another name`,
    { reason: "UPLOAD_IN_TRASH", details: { filename } },
  );
}

async function grantUpload(ctx: ServiceContext, request: UploadRequest, signal?: AbortSignal) {
  if (typeof request !== "object" || request === null) {
    throw new StowageError(
      "INVALID_INPUT",
      `upload request must be an object, got ${describeValue(request)}`,
    );
  }
  assertSafeId(request.sessionId, "sessionId");
  const file = checkUpload(ctx.policy, request);
  if (request.sha256 !== undefined) assertSha256Hex(request.sha256);
  const owner = await authorize(ctx, request.principal, request.sessionId, signal);
  const location = locate(owner, request.sessionId, file.filename);
  // The trash check (a HEAD of the key; the trash marks too when something is there) runs beside
  // the grant's own requests (a record's PUT on RGW): first, it doubled a grant's time. Its
  // refusal comes before any other error and undoes the grant like one, before a URL is returned.
  const trashRefusal = refuseOverTrashedUpload(
    ctx,
    owner,
    location.key,
    request.sessionId,
    file.filename,
    signal,
  ).then(
    () => undefined,
    (err: unknown) => err,
  );
  let reservation: QuotaReservation | undefined;
  let unrecord: (() => Promise<void>) | undefined;
  try {
    const revocations = await ctx.quota.revocations(location.scope, withSignal(signal));
    reservation = await ctx.quota.reserve(
      {
        scope: location.scope,
        key: location.key,
        bytes: file.fileSize,
        limitBytes: ctx.policy.maxTotalSizeBytes,
        urlExpiresAt: new Date(ctx.now() + ctx.uploadSeconds * 1000),
        source: ctx.source,
      },
      withSignal(signal),
    );
    const signed = await ctx.store.createUploadUrl!(
      {
        key: location.key,
        contentType: file.contentType,
        contentLength: file.fileSize,
        ...(request.sha256 === undefined ? {} : { sha256: request.sha256 }),
        expiresInSeconds: ctx.uploadSeconds,
      },
      withSignal(signal),
    );
    unrecord = await ctx.verifier.record(
      location,
      {
        size: file.fileSize,
        sha256: request.sha256 ?? null,
        contentType: file.contentType,
        expiresAt: signed.expiresAt.getTime(),
      },
      withSignal(signal),
    );
    const refused = await trashRefusal;
    if (refused !== undefined) throw refused;
    await authorize(ctx, owner, request.sessionId, signal);
    if ((await ctx.quota.revocations(location.scope, withSignal(signal))) !== revocations) {
      throw new StowageError(
        "CONFLICT",
        `the uploads of session ${describeValue(request.sessionId)} were deleted while this URL was signed; ask again`,
        { reason: "UPLOADS_REVOKED" },
      );
    }
    return { url: signed.url, headers: signed.headers, key: location.key, expiresIn: ctx.uploadSeconds };
  } catch (err) {
    await unrecord?.().catch(() => {});
    await reservation?.release().catch(() => {});
    throw (await trashRefusal) ?? err;
  }
}

/**
 * Completes one upload. For a session that no longer exists but whose uploads were deleted, what
 * sits at the key came through a revoked URL: it is deleted, and the answer says so.
 */
async function completeOne(
  ctx: ServiceContext,
  principal: Principal,
  sessionId: string,
  filename: string,
  signal?: AbortSignal,
): Promise<UploadInfo> {
  assertUploadFilename(filename, ctx.policy.maxFilenameBytes);
  let owner: Principal;
  try {
    owner = await authorize(ctx, principal, sessionId, signal);
  } catch (err) {
    if (StowageError.is(err, "NOT_FOUND"))
      await removeRevokedLeftover(ctx, principal, sessionId, filename, signal);
    throw err;
  }
  const location = locate(owner, sessionId, filename);
  const revocations = await ctx.quota.revocations(location.scope, withSignal(signal));
  const verdict = await ctx.verifier.settle(location, undefined, {
    revoked: revocations > 0,
    ...withSignal(signal),
  });
  // Overtaken by a deletion, whatever the verdict: what it saw is being deleted.
  if (await overtaken(ctx, location.scope, revocations, [location.key], signal)) {
    throw revokedUpload(filename, sessionId);
  }
  return infoOf(ctx, filename, verifiedObject(verdict, filename, sessionId));
}

/** Deletes an upload (and its records) that landed in a deleted session through a revoked URL. */
async function removeRevokedLeftover(
  ctx: ServiceContext,
  principal: Principal,
  sessionId: string,
  filename: string,
  signal?: AbortSignal,
): Promise<void> {
  const location = locate(principal, sessionId, filename);
  if (!(await wasRevoked(ctx, location.scope, signal))) return;
  const io = withSignal(signal);
  if ((await ctx.store.head(location.key, io)) === null) return;
  const records: string[] = [];
  for await (const item of ctx.store.iterate({ prefix: location.recordsPrefix, ...io }))
    records.push(item.key);
  await mapConcurrent(
    [location.key, ...records],
    SETTLE_CONCURRENCY,
    (key) => ctx.store.delete(key, io),
    signal,
  );
  await ctx.quota.forget(location.scope, location.key, io);
  throw revokedUpload(filename, sessionId);
}

/**
 * The session's verified uploads in key order, each unsettled one verified first (after a
 * revocation, every one), and the ledger reconciled with what the listing found.
 */
async function listSessionUploads(
  ctx: ServiceContext,
  principal: Principal,
  sessionId: string,
  signal?: AbortSignal,
): Promise<UploadInfo[]> {
  const owner = await authorize(ctx, principal, sessionId, signal);
  const scope = sessionPrefix(owner, sessionId);
  const listed = new Map<string, { size: number; lastModified: Date }>();
  const objects: { key: string; size: number }[] = [];
  const records = new Map<string, string[]>();
  const revocations = await ctx.quota.revocations(scope, withSignal(signal));
  const revoked = revocations > 0;
  // Taken before the first page: a commit that lands while the listing runs outlives it.
  const listedAt = new Date(ctx.now());
  for await (const item of ctx.store.iterate({ prefix: scope, ...withSignal(signal) })) {
    const place = sessionKeyParts(item.key)?.place;
    if (place?.folder === "records") {
      records.set(place.filename, [...(records.get(place.filename) ?? []), item.key]);
      continue;
    }
    objects.push({ key: item.key, size: item.size });
    if (place?.folder === "uploads") listed.set(place.filename, item);
  }
  // After a revocation an upload without records may have come through a revoked URL.
  const unsettled = [...new Set([...records.keys(), ...(revoked ? listed.keys() : [])])];
  const verdicts = await mapConcurrent(
    unsettled,
    SETTLE_CONCURRENCY,
    (filename) =>
      ctx.verifier.settle(locate(owner, sessionId, filename), records.get(filename) ?? [], {
        revoked,
        ...withSignal(signal),
      }),
    signal,
  );
  // What verification decided replaces what the listing saw: a refused file is gone, and a
  // file that landed after the listing passed its key is there.
  const settled = new Map<string, ObjectInfo | undefined>();
  unsettled.forEach((filename, i) => {
    const verdict = verdicts[i]!;
    settled.set(filename, verdict.state === "verified" ? verdict.info : undefined);
  });
  for (const [filename, info] of settled) {
    if (info) listed.set(filename, info);
    else listed.delete(filename);
  }
  const counted = objects.filter((object) => {
    const place = sessionKeyParts(object.key)?.place;
    return place?.folder !== "uploads" || !settled.has(place.filename);
  });
  for (const [filename, info] of settled) {
    if (info) counted.push({ key: uploadKey(owner, sessionId, filename), size: info.size });
  }
  const verified = [...settled].flatMap(([filename, info]) =>
    info ? [uploadKey(owner, sessionId, filename)] : [],
  );
  if (await overtaken(ctx, scope, revocations, verified, signal)) {
    throw new StowageError(
      "CONFLICT",
      `the uploads of session ${describeValue(sessionId)} were deleted while they were listed; list again`,
      { reason: "UPLOADS_REVOKED" },
    );
  }
  // Uploads past retention stay counted (they still take the session's room) but are not listed:
  // they wait for their owner's restore or the sweep (`listExpiredUploads`).
  await ctx.quota.reconcile(scope, { objects: counted, listedAt }, withSignal(signal));
  const now = ctx.now();
  const mark = await readUploadsTrashMark(ctx.store, owner, sessionId, signal);
  return [...listed]
    .filter(([, object]) => !isExpiredUpload(ctx, object.lastModified, now, mark))
    .sort(([a], [b]) => compareUtf8(a, b))
    .map(([filename, object]) => infoOf(ctx, filename, object));
}

/** A download URL of a verified upload; an unverified one is verified first. */
async function signDownload(
  ctx: ServiceContext,
  principal: Principal,
  sessionId: string,
  filename: string,
  expiresInSeconds: number,
  signal?: AbortSignal,
): Promise<DownloadGrant> {
  assertUploadFilename(filename, ctx.policy.maxFilenameBytes);
  const owner = await authorize(ctx, principal, sessionId, signal);
  const location = locate(owner, sessionId, filename);
  // An upload nobody completed yet is checked before it is ever served; while an upload URL can
  // still write it unchecked, the download is of a verified copy no URL can write.
  const revocations = await ctx.quota.revocations(location.scope, withSignal(signal));
  const verdict = await ctx.verifier.settle(location, undefined, {
    revoked: revocations > 0,
    ...withSignal(signal),
  });
  if (await overtaken(ctx, location.scope, revocations, [location.key], signal)) {
    throw revokedUpload(filename, sessionId);
  }
  const info = verifiedObject(verdict, filename, sessionId);
  const mark = await readUploadsTrashMark(ctx.store, owner, sessionId, signal);
  if (isExpiredUpload(ctx, info.lastModified, ctx.now(), mark)) {
    throw expiredUpload(ctx, filename, sessionId, info.lastModified, mark);
  }
  const key =
    verdict.state === "verified"
      ? await ctx.verifier.servable(location, verdict, withSignal(signal))
      : location.key;
  // Downloads are attachments: an uploaded .html must never render on the storage origin.
  const signed = await ctx.store.createDownloadUrl!(
    { key, expiresInSeconds, disposition: "attachment", filename },
    withSignal(signal),
  );
  return { url: signed.url, expiresIn: expiresInSeconds };
}

/**
 * Resolves for a PUT through a URL the service handed out and has not revoked, into a session its
 * owner still has; UPLOAD_REVOKED otherwise. The session is asked too: a session in the trash keeps
 * its grants (a restore gives them back), but nothing may land in it while it is there.
 */
async function checkGrant(ctx: ServiceContext, upload: DirectUploadGrant, signal?: AbortSignal) {
  const parts = typeof upload?.key === "string" ? sessionKeyParts(upload.key) : undefined;
  const held =
    parts?.place.folder === "uploads" &&
    (await ctx.verifier.holdsGrant(locate(parts.owner, parts.sessionId, parts.place.filename), upload, {
      ...withSignal(signal),
    })) &&
    (await ctx.sessionExists(parts.owner, parts.sessionId, withSignal(signal))) === true;
  if (!held) {
    throw new StowageError(
      "FORBIDDEN",
      "this upload URL was revoked (its session or the session's uploads were deleted), or was never handed out",
      { reason: "UPLOAD_REVOKED", details: { key: upload?.key } },
    );
  }
  // A URL handed out before its name's upload went to the trash must not overwrite it there.
  await refuseOverTrashedUpload(
    ctx,
    parts.owner,
    upload.key,
    parts.sessionId,
    (parts.place as { filename: string }).filename,
    signal,
  );
}

/**
 * Resolves for a download of a key that is no session's, or of a session its owner still has and
 * not past retention; NOT_FOUND otherwise.
 */
async function checkDownload(ctx: ServiceContext, download: { key: string }, signal?: AbortSignal) {
  const parts = typeof download?.key === "string" ? sessionKeyParts(download.key) : undefined;
  if (parts === undefined) return;
  if ((await ctx.sessionExists(parts.owner, parts.sessionId, withSignal(signal))) !== true) {
    throw new StowageError("NOT_FOUND", `no session ${describeValue(parts.sessionId)}`, {
      reason: "SESSION_NOT_FOUND",
    });
  }
  if (parts.place.folder !== "uploads") return;
  // A URL signed before its upload expired (or went to the trash) serves nothing once it has.
  const [info, mark] = await Promise.all([
    ctx.store.head(download.key, withSignal(signal)),
    readUploadsTrashMark(ctx.store, parts.owner, parts.sessionId, signal),
  ]);
  if (info && isExpiredUpload(ctx, info.lastModified, ctx.now(), mark)) {
    throw expiredUpload(ctx, parts.place.filename, parts.sessionId, info.lastModified, mark);
  }
}

/**
 * The backend side of uploads over any ObjectStore with direct URLs: for a principal its caller
 * authenticated, checks that the session exists in that principal's own namespace, the file
 * against the policy and the session's quota, then hands out a URL whose signature binds size,
 * type and checksum, and records what it bound. The bytes go straight to storage; an upload counts
 * once it is verified (on completion or on listing). Deleting a session's uploads revokes its URLs
 * (see `deleteSessionUploads`). `handleUploadRequest` serves it over HTTP.
 */
export function createUploadService(options: UploadServiceOptions): UploadService {
  validateOptions(options);
  const { store, sessionExists } = options;
  const uploadSeconds = lifetime(
    "uploadExpiresInSeconds",
    options.uploadExpiresInSeconds,
    DEFAULT_UPLOAD_URL_SECONDS,
  );
  const downloadSeconds = lifetime(
    "downloadExpiresInSeconds",
    options.downloadExpiresInSeconds,
    DEFAULT_DOWNLOAD_URL_SECONDS,
  );
  const policy = options.policy ?? DEFAULT_UPLOAD_POLICY;
  const now = options.now ?? Date.now;
  const quota = options.quota ?? createMemoryQuotaLedger({ now });
  const logger = options.logger ?? consoleLogger;
  const source = uploadUsageSource(store);
  const verifier = createUploadVerifier({ store, quota, now, logger });
  const retention = createUploadRetention({ store, quota, now });
  const retentionDays = options.retentionDays;
  if (
    retentionDays !== undefined &&
    (typeof retentionDays !== "number" || !Number.isFinite(retentionDays) || retentionDays <= 0)
  ) {
    throw invalidOption(
      `retentionDays must be a positive number or absent, got ${describeValue(retentionDays)}`,
    );
  }
  const ctx: ServiceContext = {
    store,
    sessionExists,
    policy,
    quota,
    verifier,
    source,
    now,
    uploadSeconds,
    retentionDays,
  };

  return Object.freeze({
    policy,
    store,
    ...(retentionDays === undefined ? {} : { retentionDays }),

    requestUpload: (request, { signal } = {}) => grantUpload(ctx, request, signal),

    completeUpload: (principal, sessionId, filename, { signal } = {}) =>
      completeOne(ctx, principal, sessionId, filename, signal),

    listUploads: (principal, sessionId, { signal } = {}) =>
      listSessionUploads(ctx, principal, sessionId, signal),

    requestDownload: (principal, sessionId, filename, { signal } = {}) =>
      signDownload(ctx, principal, sessionId, filename, downloadSeconds, signal),

    async usage(principal, sessionId, { signal } = {}) {
      const owner = await authorize(ctx, principal, sessionId, signal);
      const usage = await quota.usage(sessionPrefix(owner, sessionId), source, withSignal(signal));
      return { ...usage, limitBytes: policy.maxTotalSizeBytes };
    },

    async deleteSessionUploads(principal, sessionId, options = {}) {
      assertPrincipal(principal);
      const owner: Principal = { kind: principal.kind, id: principal.id };
      const deleted = await retention.deleteSession(owner, sessionId, options);
      // What was in the trash went with the rest: its marks have nothing left to say.
      const marks = await listUploadsTrashMarks(store, owner, sessionId, options.signal);
      await deleteUploadsTrashMarks(store, marks, options.signal);
      return deleted;
    },

    async trashSessionUploads(principal, sessionId, { by, signal } = {}) {
      const owner = await authorize(ctx, principal, sessionId, signal);
      return trashSessionUploads(ctx, owner, sessionId, by ?? "operator", withSignal(signal));
    },

    sweepTrashedUploads: (sweepOptions) => sweepTrashedUploads(ctx, sweepOptions),

    sweepUploads: (sweepOptions) => retention.sweep(sweepOptions),

    listExpiredUploads: (principal, operation) => listExpiredUploads(ctx, principal, operation),

    restoreExpiredUpload: (principal, sessionId, filename, operation) =>
      restoreExpiredUpload(ctx, principal, sessionId, filename, operation),

    purgeExpiredUpload: (principal, sessionId, filename, operation) =>
      purgeExpiredUpload(ctx, principal, sessionId, filename, operation),

    sweepRevokedUploads: (sweepOptions = {}) => sweepRevokedGrants({ store, verifier, now }, sweepOptions),

    checkDirectUpload: (upload, { signal } = {}) => checkGrant(ctx, upload, signal),

    checkDirectDownload: (download, { signal } = {}) => checkDownload(ctx, download, signal),
  } satisfies UploadService);
}
