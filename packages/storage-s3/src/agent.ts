// The agent side, free of the AWS SDK: a devbox that uploads artifacts needs only this entry.
export { artifactFilenameProblem, DEFAULT_MAX_FILENAME_BYTES } from "./artifact-filename.js";
export {
  type ArtifactPolicy,
  type ArtifactPolicyOptions,
  artifactPolicyFromEnv,
  contentTypeForFilename,
  createArtifactPolicy,
  DEFAULT_ARTIFACT_POLICY,
  DEFAULT_ARTIFACT_TYPES,
  DEFAULT_MAX_FILE_SIZE_MB,
  DEFAULT_MAX_TOTAL_SIZE_MB,
  MB,
} from "./artifact-policy.js";
export {
  ARTIFACT_UPLOAD_URL_PATH,
  artifactDownloadPath,
  artifactListPath,
  type ErrorResponseBody,
  type UploadUrlRequestBody,
  type UploadUrlResponseBody,
} from "./artifact-protocol.js";
export { MAX_RETRY_DELAY_MS } from "./retry.js";
export {
  DEFAULT_API_TIMEOUT_MS,
  DEFAULT_RETRY_DELAY_MS,
  DEFAULT_UPLOAD_CONCURRENCY,
  DEFAULT_UPLOAD_RETRIES,
  DEFAULT_UPLOAD_TIMEOUT_MS,
  PROGRESS_CHUNK_BYTES,
  type UploadArtifactOptions,
  type UploadArtifactResult,
  type UploadProgress,
  uploadArtifact,
  uploadArtifacts,
} from "./upload-artifact.js";
