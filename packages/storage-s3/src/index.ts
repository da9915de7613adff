export {
  API_KEY_ID_BYTES,
  API_KEY_SECRET_BYTES,
  type ApiKeyRecord,
  type ApiKeyRecordStore,
  type ApiKeys,
  type ApiKeysOptions,
  createApiKeys,
  createMemoryApiKeyRecordStore,
  DEFAULT_API_KEY_PREFIX,
  hashApiKey,
  type IssuedApiKey,
  MAX_API_KEY_LENGTH,
  parseBearerToken,
} from "./api-keys.js";
export {
  artifactFilenameProblem,
  assertArtifactFilename,
  DEFAULT_MAX_FILENAME_BYTES,
  filenameExtension,
} from "./artifact-filename.js";
export {
  ARTIFACTS_FOLDER,
  artifactKey,
  artifactsPrefix,
  assertArtifactId,
  assertPrincipal,
  ID_PATTERN,
  idProblem,
  MAX_ID_LENGTH,
  type Principal,
  samePrincipal,
  sessionPrefix,
} from "./artifact-keys.js";
export {
  type ArtifactCandidate,
  type ArtifactPolicy,
  type ArtifactPolicyOptions,
  artifactPolicyFromEnv,
  type CheckedArtifact,
  checkArtifact,
  contentTypeForFilename,
  createArtifactPolicy,
  DEFAULT_ARTIFACT_POLICY,
  DEFAULT_ARTIFACT_TYPES,
  DEFAULT_MAX_FILE_SIZE_MB,
  DEFAULT_MAX_TOTAL_SIZE_MB,
  MB,
  normalizeContentType,
} from "./artifact-policy.js";
export {
  ARTIFACT_UPLOAD_URL_PATH,
  artifactDownloadPath,
  artifactListPath,
  type ErrorResponseBody,
  errorResponse,
  type UploadUrlRequestBody,
  type UploadUrlResponseBody,
} from "./artifact-protocol.js";
export {
  ARTIFACT_DOWNLOAD_URL_SECONDS,
  ARTIFACT_UPLOAD_URL_SECONDS,
  type ArtifactAuth,
  type ArtifactInfo,
  type ArtifactUploads,
  type ArtifactUploadsOptions,
  createArtifactUploads,
  type DownloadGrant,
  type SessionUsage,
  type UploadGrant,
  type UploadRequest,
} from "./artifact-uploads.js";
export { formatSize } from "./format-size.js";
export {
  attachmentDisposition,
  type PresignGetInput,
  type PresignPutInput,
  presignGet,
  presignPut,
} from "./presign.js";
export {
  createMemoryQuotaLedger,
  DEFAULT_MAX_CACHED_SCOPES,
  DEFAULT_QUOTA_USAGE_TTL_MS,
  DEFAULT_RESERVATION_GRACE_MS,
  type MemoryQuotaLedgerOptions,
  QUOTA_HEAD_CONCURRENCY,
  type QuotaLedger,
  type QuotaReservation,
  type QuotaReservationRequest,
  type QuotaUsage,
  type QuotaUsageSource,
  usageSourceFromStore,
} from "./quota-ledger.js";
export {
  createS3Client,
  DEFAULT_S3_REGION,
  type S3ClientOptions,
  s3ClientOptionsFromEnv,
} from "./s3-client.js";
export { fromS3Error, isS3NotFound, isS3PreconditionFailed, s3StatusOf } from "./s3-errors.js";
export {
  createS3ObjectStore,
  DEFAULT_PART_SIZE_BYTES,
  MAX_PART_SIZE_BYTES,
  MAX_PARTS,
  MAX_SINGLE_PUT_BYTES,
  MIN_PART_SIZE_BYTES,
  type S3DirectDownloadRequest,
  type S3ObjectStore,
  type S3ObjectStoreOptions,
} from "./s3-object-store.js";
export {
  DEFAULT_API_TIMEOUT_MS,
  DEFAULT_RETRY_DELAY_MS,
  DEFAULT_UPLOAD_CONCURRENCY,
  DEFAULT_UPLOAD_RETRIES,
  DEFAULT_UPLOAD_TIMEOUT_MS,
  type UploadArtifactOptions,
  type UploadArtifactResult,
  uploadArtifact,
  uploadArtifacts,
} from "./upload-artifact.js";
