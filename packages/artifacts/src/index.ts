export { CLAIMS_DIR_NAME } from "./ids/claims.js";
export {
  AGENT_OUTPUT_EXTENSION,
  ARTIFACT_EXTENSION,
  MAX_AGENT_OUTPUT_ID_LENGTH,
  MAX_ARTIFACT_ID,
  PARTIAL_SUFFIX,
} from "./layout/names.js";
export { artifactsDirFor } from "./layout/session-dir.js";
export { SESSION_FILE_EXTENSION } from "./layout/session-file-name.js";
export { MAX_JSON_PATH_STEPS, MAX_QUERY_LENGTH } from "./read/json-extract.js";
export {
  type ByteRangeOptions,
  DEFAULT_MAX_READ_BYTES,
  type LineRange,
  MAX_READ_BYTES_LIMIT,
  type ReadOptions,
} from "./read/read-options.js";
export {
  type ForkArtifactsOptions,
  type ForkArtifactsResult,
  forkArtifacts,
} from "./session/fork-artifacts.js";
export { type MoveSessionOptions, type MoveSessionResult, moveSession } from "./session/move-session.js";
export {
  createSessionFiles,
  type ListedSession,
  type OpenedSession,
  type SessionFiles,
  type SessionFilesOptions,
} from "./session/session-files.js";
export {
  type ArtifactWriterSource,
  createOutputSink,
  DEFAULT_SPILL_BYTES,
  MAX_SINK_BUFFERED_BYTES,
  MAX_SPILL_BYTES,
  type OutputSink,
  type OutputSinkOptions,
  type OutputSummary,
} from "./sink/output-sink.js";
export {
  type AgentOutputAllocation,
  type ArtifactStore,
  type ArtifactStoreOptions,
  createArtifactStore,
  DEFAULT_FSYNC,
} from "./store/artifact-store.js";
export type { ArtifactWriter } from "./store/artifact-writer.js";
export type { AgentOutputRead, AgentOutputReadOptions } from "./store/read-agent-output.js";
export type { ArtifactEntry, ArtifactRead, ArtifactReadOptions } from "./store/read-artifact.js";
export type { ArtifactByteRangeOptions, ByteRangeRead } from "./store/read-bytes.js";
export {
  openRunArtifacts,
  type RunArtifacts,
  type RunArtifactsOptions,
  TEMPORARY_ARTIFACTS_PREFIX,
} from "./store/run-artifacts.js";
export { AGENT_SCHEME, ARTIFACT_SCHEME, MAX_INTERNAL_URL_LENGTH } from "./urls/internal-url.js";
export {
  createInternalUrlRouter,
  type InternalByteRange,
  type InternalByteRangeOptions,
  type InternalReadOptions,
  type InternalResource,
  type InternalUrlRouter,
  type InternalUrlRouterOptions,
} from "./urls/router.js";
