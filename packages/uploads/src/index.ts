// What a caller's code calls, passes or receives (docs/CONVENTIONS.md, "Public surfaces"): the
// service and its HTTP handler, the policy, the quota ledger contract with the memory ledger and
// what a ledger of one's own needs. Limits, defaults, key layout and wire paths are not exported:
// the README gives each, and the agent side (`./agent`) is the client that builds the requests.
export { defineQuotaLedger, type QuotaLedgerDriver } from "./define-quota-ledger.js";
export type { ExpiredUpload, ExpiredUploadsOptions } from "./expired-uploads.js";
export { formatSize } from "./format-size.js";
export { createMemoryQuotaLedger, type MemoryQuotaLedgerOptions } from "./memory-quota-ledger.js";
export type {
  DownloadUrlResponseBody,
  UploadCompleteRequestBody,
  UploadCompleteResponseBody,
  UploadListEntry,
  UploadListResponseBody,
  UploadPolicyResponseBody,
  UploadUrlRequestBody,
  UploadUrlResponseBody,
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
export type { CheckedQuotaListing } from "./quota-ledger-input.js";
export type { RevokedGrantsSweep } from "./revoked-grants.js";
export { handleUploadRequest, type UploadRequestContext } from "./upload-handler.js";
export {
  createUploadPolicy,
  type UploadPolicy,
  type UploadPolicyOptions,
  uploadPolicyOptionsFromEnv,
} from "./upload-policy.js";
export type {
  SessionDeletion,
  SweepUploadsOptions,
  SweepUploadsProgress,
  SweepUploadsResult,
  SweptUpload,
} from "./upload-retention.js";
export { createUploadService, type UploadServiceOptions } from "./upload-service.js";
export type {
  DownloadGrant,
  SessionExists,
  SessionUsage,
  UploadGrant,
  UploadInfo,
  UploadRequest,
  UploadService,
} from "./upload-service-types.js";
export type { DirectUploadGrant } from "./upload-verification.js";
export type { TrashedSessionUploads } from "./uploads-trash.js";
