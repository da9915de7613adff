export { formatSize } from "./format-size.js";
export { createMemoryQuotaLedger, type MemoryQuotaLedgerOptions } from "./memory-quota-ledger.js";
export {
  type DownloadUrlResponseBody,
  MAX_UPLOAD_REQUEST_BODY_BYTES,
  UPLOAD_COMPLETE_PATH,
  UPLOAD_POLICY_PATH,
  UPLOAD_URL_PATH,
  type UploadCompleteRequestBody,
  type UploadCompleteResponseBody,
  type UploadListEntry,
  type UploadListResponseBody,
  type UploadPolicyResponseBody,
  type UploadUrlRequestBody,
  type UploadUrlResponseBody,
  uploadDownloadPath,
  uploadListPath,
} from "./protocol.js";
export {
  type QuotaCommit,
  type QuotaLedger,
  type QuotaListing,
  type QuotaReservation,
  type QuotaReservationRequest,
  type QuotaUsage,
  type QuotaUsageSource,
  quotaExceededError,
  usageSourceFromStore,
} from "./quota-ledger.js";
export {
  assertQuotaCommit,
  assertQuotaKey,
  assertQuotaReservationRequest,
  assertQuotaScope,
  assertQuotaUsageSource,
  type CheckedQuotaListing,
  checkQuotaListing,
} from "./quota-ledger-input.js";
export { assertUploadFilename, MAX_UPLOAD_FILENAME_BYTES, uploadFilenameProblem } from "./upload-filename.js";
export type { UploadRequestContext } from "./upload-handler.js";
export { sessionPrefix, uploadKey, uploadsPrefix } from "./upload-keys.js";
export {
  type CheckedUpload,
  checkUpload,
  contentTypeForFilename,
  createUploadPolicy,
  DEFAULT_UPLOAD_POLICY,
  DEFAULT_UPLOAD_TYPES,
  type UploadCandidate,
  type UploadPolicy,
  type UploadPolicyOptions,
  uploadPolicyOptionsFromEnv,
} from "./upload-policy.js";
export type {
  SessionDeletion,
  SweepUploadsOptions,
  SweepUploadsResult,
  SweptUpload,
} from "./upload-retention.js";
export {
  createUploadService,
  type DirectUploadGrant,
  type DownloadGrant,
  type SessionUsage,
  type UploadAuth,
  type UploadGrant,
  type UploadInfo,
  type UploadRequest,
  type UploadService,
  type UploadServiceOptions,
} from "./upload-service.js";
