export type { ByteRangeOptions, LineRange, ReadOptions } from "./read/read-options.js";
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
  type OutputSink,
  type OutputSinkOptions,
  type OutputSummary,
} from "./sink/output-sink.js";
export {
  type AgentOutputAllocation,
  type ArtifactStore,
  type ArtifactStoreOptions,
  createArtifactStore,
} from "./store/artifact-store.js";
export type { ArtifactWriter } from "./store/artifact-writer.js";
export type { AgentOutputRead, AgentOutputReadOptions } from "./store/read-agent-output.js";
export type { ArtifactEntry, ArtifactRead, ArtifactReadOptions } from "./store/read-artifact.js";
export type { ArtifactByteRangeOptions, ByteRangeRead } from "./store/read-bytes.js";
export { openRunArtifacts, type RunArtifacts, type RunArtifactsOptions } from "./store/run-artifacts.js";
export { AGENT_SCHEME, ARTIFACT_SCHEME } from "./urls/internal-url.js";
export {
  createInternalUrlRouter,
  type InternalByteRange,
  type InternalByteRangeOptions,
  type InternalReadOptions,
  type InternalResource,
  type InternalUrlRouter,
  type InternalUrlRouterOptions,
} from "./urls/router.js";
