// What a caller of this package calls, passes and receives. Limits and defaults are not exported:
// the README gives each value, and an error that enforces one says it in `details.limit`. The
// session-id rule (`assertSessionId`) is core's. What a backend of its own needs is in
// `@stowage/sessions/backend`, test helpers and the conformance suites in `@stowage/sessions/testing`.
export { type AgentVersion, agentVersionFromCliOutput, parseAgentVersion } from "./agents/agent-version.js";
export type { SessionAgent } from "./agents/session-agent.js";
export {
  AGENT_VERSION_INCOMPATIBILITIES,
  type AgentVersionCheck,
  type AgentVersionIncompatibility,
  type AgentVersionRange,
  type AgentVersionRule,
  checkAgentVersion,
} from "./agents/version-compatibility.js";
export {
  type CapturedSession,
  type CaptureSessionOptions,
  type ClaudeCaptureOptions,
  type CodexCaptureOptions,
  captureSession,
  type OpencodeCaptureOptions,
} from "./archive/capture-session.js";
export type { SkippedFile } from "./archive/collect-files.js";
export type { SessionArchiveEntry, SessionArchiveManifest } from "./archive/manifest.js";
export {
  type ReadSessionFilesOptions,
  readSessionFiles,
  type SessionFiles,
} from "./archive/read-session-files.js";
export {
  type RestoredSession,
  type RestoreSessionOptions,
  restoreSession,
} from "./archive/restore-session.js";
export type { SessionArchive } from "./archive/session-archive.js";
export type { SessionBlobFormat } from "./archive/session-archive-reader.js";
export {
  type VerifiedSessionBlob,
  type VerifySessionBlobOptions,
  verifySessionBlob,
} from "./archive/verify-session-blob.js";
// Captures kept as chunks in a content store: a blob a container sent stored so, and read back whole.
export { type AssembleSessionBlobOptions, assembleSessionBlob } from "./chunks/assemble-session-blob.js";
export { type ChunkSessionBlobOptions, chunkSessionBlob } from "./chunks/chunk-session-blob.js";
export type { ChunkedSessionBlob, ChunkStoreOptions } from "./chunks/chunked-archive.js";
export {
  type ClaudeSessionInfo,
  type ClaudeSessionListing,
  listClaudeSessions,
} from "./claude/list-claude-sessions.js";
export {
  type ClaudeSessionLocation,
  type ClaudeSessionLocationOptions,
  claudeSessionLocation,
} from "./claude/session-location.js";
export type { SessionCodec } from "./codec/codecs.js";
export { compressChunks, type DecompressOptions, decompressBounded } from "./codec/compress.js";
export type { CodexCliOptions } from "./codex/codex-app-server.js";
export type { CodexGoal, CodexGoalCapture, CodexGoalRestore } from "./codex/codex-goal.js";
export type { SecretLeftOut } from "./configuration/collect-configuration.js";
export type { RestoredConfiguration } from "./configuration/restore-configuration.js";
export type { OpencodeCliOptions } from "./opencode/opencode-cli.js";
export { iterateSessionBlobs } from "./repository/iterate-session-blobs.js";
export {
  createMemorySessionBlobRepository,
  type MemorySessionBlobsOptions,
} from "./repository/memory-session-blobs.js";
export type {
  CreateSessionBlobInput,
  CreateSessionBlobOptions,
  DeleteExpiredOptions,
  ExpiredSessionBlob,
  ListOwnedSessionBlobsOptions,
  ListSessionBlobsOptions,
  RepositoryOperationOptions,
  SessionBlobPage,
  SessionBlobRecord,
  SessionBlobRepository,
  SessionBlobSummary,
  SessionBlobSummaryPage,
} from "./repository/session-blob-repository.js";
export type { SessionBlobLimits } from "./repository/validate-input.js";
export { type TrackedMessages, trackSessionId } from "./sdk/track-session-id.js";
// The Agent SDK's SessionStore: what its users pass and get.
export {
  type CompleteSessionStore,
  createObjectSessionStore,
  type ObjectSessionStore,
  type ObjectSessionStoreOptions,
  type SessionKey,
  type SessionStoreDeleteOptions,
  type SessionStoreEntry,
  type SessionStorePayloadOptions,
  type SessionStoreSeal,
  type SessionStoreTrash,
  type SessionSummaryEntry,
  type StoreOperationOptions,
  type TrashedTranscript,
} from "./session-store/index.js";
export {
  type FromTransportOptions,
  fromTransport,
  type SessionTransport,
  type TransportedSession,
  toTransport,
} from "./transport/transport.js";
