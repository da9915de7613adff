import type { ObjectStore, OperationOptions, Principal } from "@stowage/core";
import type { ExpiredUpload, ExpiredUploadsOptions } from "./expired-uploads.js";
import type { QuotaUsage } from "./quota-ledger.js";
import type { RevokedGrantsSweep } from "./revoked-grants.js";
import type { UploadPolicy } from "./upload-policy.js";
import type {
  SessionDeletion,
  SweepUploadsOptions,
  SweepUploadsResult,
  SweptUpload,
} from "./upload-retention.js";
import type { DirectUploadGrant } from "./upload-verification.js";
import type { TrashedSessionUploads } from "./uploads-trash.js";

// The upload service as its callers see it. Both the service (`upload-service.ts`) and the HTTP
// handler over it (`upload-handler.ts`) import these; neither imports the other.

/**
 * Whether `principal` has a session `sessionId`. Sessions live in each principal's own namespace
 * (as their keys do, `sessions/<user|org>/<id>/<sessionId>/…`): the same id may exist for two
 * principals independently, and another principal's session is simply not there.
 */
export type SessionExists = (
  principal: Principal,
  sessionId: string,
  options: OperationOptions,
) => Promise<boolean> | boolean;

/** A request for an upload URL, on behalf of a principal the caller authenticated. */
export interface UploadRequest {
  principal: Principal;
  sessionId: string;
  filename: string;
  contentType: string;
  fileSize: number;
  /** Hex SHA-256 of the file; when given, the URL binds it and the uploader must send it. */
  sha256?: string;
}

/** A signed upload: where and how to PUT the file. */
export interface UploadGrant {
  /** PUT the file here… */
  url: string;
  /** …with exactly these headers (content-type, content-length, and the checksum when bound). */
  headers: Record<string, string>;
  /** The store key the file will have. */
  key: string;
  expiresIn: number;
}

/** One upload of a session, as listed. */
export interface UploadInfo {
  filename: string;
  size: number;
  /** `1.0 MiB` (1,024-byte units, named as such). */
  sizeFormatted: string;
  lastModified: Date;
  /**
   * When it expires (`retentionDays` after its last change): from then it is no longer listed nor
   * served, and waits for a restore or the sweep. Absent where uploads are kept.
   */
  expiresAt?: Date;
}

/** A signed download URL; it serves the file as an attachment. */
export interface DownloadGrant {
  url: string;
  expiresIn: number;
}

/** A session's usage against its limit. */
export interface SessionUsage extends QuotaUsage {
  limitBytes: number;
}

/**
 * The upload service; see `createUploadService`. Every method takes the principal its caller
 * authenticated (the service checks that the session is in that principal's namespace, never who
 * the caller is); `handleUploadRequest` serves it over HTTP.
 */
export interface UploadService {
  readonly policy: UploadPolicy;
  readonly store: ObjectStore;
  /** The service's `retentionDays`: absent where uploads are kept until deleted. */
  readonly retentionDays?: number;
  /** Checks the file and the quota, reserves its size, and signs a URL that binds what was checked. */
  requestUpload(request: UploadRequest, options?: OperationOptions): Promise<UploadGrant>;
  /**
   * Verifies a landed upload and counts it: where the store checks the bound SHA-256 itself
   * (AWS S3, the fs signer) the signed size is enough; elsewhere (Ceph RGW 16) the stored object
   * is hashed (streamed) and compared with what its URL bound. A mismatch is deleted and thrown
   * as INTEGRITY (`UPLOAD_MISMATCH`); nothing landed is NOT_FOUND (`UPLOAD_NOT_FOUND`).
   */
  completeUpload(
    principal: Principal,
    sessionId: string,
    filename: string,
    options?: OperationOptions,
  ): Promise<UploadInfo>;
  /**
   * The session's verified uploads, in key order; only files written under its uploads prefix,
   * and none past retention (see {@link UploadService.listExpiredUploads}).
   * Uploads nobody completed are verified here first (a refused one is deleted, never listed),
   * and the ledger is reconciled with what the listing found.
   */
  listUploads(principal: Principal, sessionId: string, options?: OperationOptions): Promise<UploadInfo[]>;
  /**
   * A download URL of a verified upload; an unverified one is verified first. NOT_FOUND
   * (`UPLOAD_EXPIRED`) for an upload past retention.
   */
  requestDownload(
    principal: Principal,
    sessionId: string,
    filename: string,
    options?: OperationOptions,
  ): Promise<DownloadGrant>;
  /** Bytes used and reserved in a session, against its limit. */
  usage(principal: Principal, sessionId: string, options?: OperationOptions): Promise<SessionUsage>;
  /**
   * Removes everything under the session's prefix (uploads, their records, `session.json`,
   * `diff.txt`: the layout's "simple recursive deletion"); the ledger follows. Revokes every
   * upload URL handed out for the session before: their reservations end at once, a URL being
   * handed out meanwhile is refused (CONFLICT `UPLOADS_REVOKED`), and what a revoked URL writes
   * is refused (FORBIDDEN `UPLOAD_REVOKED`): at the PUT where the store asks
   * ({@link UploadService.checkDirectUpload}), else at completion or the first listing, and
   * deleted. Needs no session: call it before or after removing the session itself (a session
   * being deleted should already refuse `sessionExists`, so that no new URL is handed out for it
   * meanwhile). Only `principal`'s namespace is touched.
   */
  deleteSessionUploads(
    principal: Principal,
    sessionId: string,
    options?: OperationOptions,
  ): Promise<SessionDeletion>;
  /**
   * The retention sweep: deletes uploads last modified more than `olderThanDays` days ago,
   * across every session of the store (with `dryRun`, only reports them); the ledger follows.
   * For an app's periodic sweeper.
   */
  sweepUploads(options: SweepUploadsOptions): Promise<SweepUploadsResult>;
  /**
   * Every upload of `principal`'s sessions past retention and not swept yet, in key order: what a
   * trash lists. Of one session with `sessionId`; of one upload (one HEAD) with `filename` too.
   * Empty where uploads are kept (no `retentionDays`).
   */
  listExpiredUploads(principal: Principal, options?: ExpiredUploadsOptions): Promise<ExpiredUpload[]>;
  /**
   * Brings an upload past retention back (its last change becomes now: the store's `touch`, the
   * bytes untouched); false when it is not past retention (restored or uploaded again since,
   * swept, never there). A sweep that looked at it just before the restore may still delete it:
   * the ObjectStore contract has no conditional delete, and that moment is the only window.
   */
  restoreExpiredUpload(
    principal: Principal,
    sessionId: string,
    filename: string,
    options?: OperationOptions,
  ): Promise<boolean>;
  /** Deletes an upload past retention now, the ledger following; its size, or null when it is not past retention. */
  purgeExpiredUpload(
    principal: Principal,
    sessionId: string,
    filename: string,
    options?: OperationOptions,
  ): Promise<number | null>;
  /**
   * Deletes what landed through URLs revoked by `deleteSessionUploads` where the store cannot
   * refuse them (S3: a presigned PUT works until it expires), in sessions deleted and not listed
   * since; returns how many uploads went. For an app's periodic sweeper, with or without a
   * retention: until it runs, such bytes sit in the store, counted by no quota, listed nowhere.
   */
  sweepRevokedUploads(options?: OperationOptions): Promise<RevokedGrantsSweep>;
  /**
   * Deletes the session's uploads into the trash: every upload last changed by now is expired
   * from now, `by` whom (neither listed nor served, still counted; `listExpiredUploads` gives
   * them with `deletedBy`, `restoreExpiredUpload` brings one back, `purgeExpiredUpload` deletes
   * one, `sweepTrashedUploads` deletes them after their stay). Nothing moves, and uploads made
   * afterwards are not touched. Two deletions at once keep the later one's time (what the answer's
   * `trashedAt` gives): everything changed before it is in the trash. NOT_FOUND
   * (`SESSION_NOT_FOUND`) as every call naming a session.
   */
  trashSessionUploads(
    principal: Principal,
    sessionId: string,
    options?: OperationOptions & { by?: string },
  ): Promise<TrashedSessionUploads>;
  /**
   * Deletes the uploads each `trashSessionUploads` took once `graceMs` has passed since, the ledger
   * following, then its mark and the earlier ones (a later deletion's mark stays, with what it
   * takes); `onSwept(uploads, by)` is told each session's (for an audit). How many uploads went.
   */
  sweepTrashedUploads(
    options: OperationOptions & {
      graceMs: number;
      onSwept?: (uploads: readonly SweptUpload[], by: string) => void | Promise<void>;
    },
  ): Promise<number>;
  /**
   * Whether an upload through a signed URL may be stored: resolves when the URL is one the service
   * handed out and has not revoked, and `sessionExists` still says yes for its session (a session
   * in a trash keeps its grants for a restore, but takes no upload meanwhile); FORBIDDEN
   * (`UPLOAD_REVOKED`) otherwise. For a store whose
   * PUTs the app serves itself: the file-system store's `directUrls.checkUpload`.
   */
  checkDirectUpload(upload: DirectUploadGrant, options?: OperationOptions): Promise<void>;
  /**
   * Whether a download through a signed URL may be served: resolves unless the key is a file of a
   * session `sessionExists` says no for (deleted, or in a trash, since the URL was signed):
   * NOT_FOUND (`SESSION_NOT_FOUND`) then; or an upload past retention since: NOT_FOUND
   * (`UPLOAD_EXPIRED`). For a store whose downloads the app serves itself: the
   * file-system store's `directUrls.checkDownload`.
   */
  checkDirectDownload(download: { key: string }, options?: OperationOptions): Promise<void>;
}
