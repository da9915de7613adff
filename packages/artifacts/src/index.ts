export { CLAIMS_DIR_NAME } from "./ids/claims.js";
export { RESCAN_AFTER_CONFLICTS } from "./ids/sequence-allocator.js";
export { MAX_LISTED_IDS } from "./layout/listing.js";
export {
  AGENT_OUTPUT_EXTENSION,
  ARTIFACT_EXTENSION,
  agentOutputIdProblem,
  FALLBACK_AGENT_NAME,
  FALLBACK_TOOL_TYPE,
  MAX_AGENT_NAME_LENGTH,
  MAX_AGENT_OUTPUT_ID_LENGTH,
  MAX_ARTIFACT_ID,
  MAX_TOOL_TYPE_LENGTH,
  PARTIAL_SUFFIX,
  sanitizeAgentName,
  sanitizeToolType,
} from "./layout/names.js";
export { artifactsDirFor, SESSION_FILE_EXTENSION } from "./layout/session-dir.js";
export { MAX_JSON_PATH_STEPS, MAX_QUERY_LENGTH } from "./read/json-extract.js";
export { LINE_SCAN_CHUNK_BYTES } from "./read/read-lines.js";
export {
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
  type ArtifactWriterSource,
  createOutputSink,
  DEFAULT_SPILL_BYTES,
  MAX_SINK_BUFFERED_BYTES,
  MAX_SPILL_BYTES,
  OutputSink,
  type OutputSinkOptions,
  type OutputSummary,
  SINK_HIGH_WATER_BYTES,
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
export {
  AGENT_SCHEME,
  ARTIFACT_SCHEME,
  type InternalUrl,
  MAX_INTERNAL_URL_LENGTH,
  parseInternalUrl,
} from "./urls/internal-url.js";
export {
  createInternalUrlRouter,
  type InternalReadOptions,
  type InternalResource,
  type InternalUrlRouter,
} from "./urls/router.js";
