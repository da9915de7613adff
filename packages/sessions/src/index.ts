export { DEFAULT_SESSION_AGENT, SESSION_AGENTS, type SessionAgent } from "./agents/session-agent.js";
export { assertSessionId, isSessionId, MAX_SESSION_ID_LENGTH } from "./agents/session-id.js";
export {
  type CapturedSession,
  type CaptureSessionOptions,
  type ClaudeCaptureOptions,
  type CodexCaptureOptions,
  captureSession,
  type OpencodeCaptureOptions,
} from "./archive/capture-session.js";
export type { SkippedFile } from "./archive/collect-files.js";
export { MAX_JSONL_LINE_CHARS } from "./archive/jsonl-checker.js";
export {
  DEFAULT_MAX_SESSION_BYTES,
  MAX_ARCHIVE_ENTRIES,
  MAX_ENTRY_MTIME_MS,
  MAX_MANIFEST_BYTES,
  type SessionArchiveEntry,
  type SessionArchiveManifest,
} from "./archive/manifest.js";
export {
  type RestoredSession,
  type RestoreSessionOptions,
  restoreSession,
} from "./archive/restore-session.js";
export { DEFAULT_MAX_SESSION_BLOB_BYTES, type SessionArchive } from "./archive/session-archive.js";
export type { SessionBlobFormat } from "./archive/session-archive-reader.js";
export {
  type VerifiedSessionBlob,
  type VerifySessionBlobOptions,
  verifySessionBlob,
} from "./archive/verify-session-blob.js";
export {
  type ClaudeSessionInfo,
  type ClaudeSessionListing,
  listClaudeSessions,
} from "./claude/list-claude-sessions.js";
export { claudeProjectKey, sanitizeProjectPath } from "./claude/project-key.js";
export {
  type ClaudeSessionLocation,
  type ClaudeSessionLocationOptions,
  claudeSessionLocation,
} from "./claude/session-location.js";
export {
  availableCodecs,
  DEFAULT_SESSION_CODEC,
  SESSION_CODECS,
  type SessionCodec,
} from "./codec/codecs.js";
export { compressChunks, type DecompressOptions, decompressBounded } from "./codec/compress.js";
export {
  type CodexRolloutLocation,
  type CodexRolloutLocationOptions,
  codexRolloutLocation,
} from "./codex/rollout-location.js";
export { DEFAULT_OPENCODE_TIMEOUT_MS, type OpencodeCliOptions } from "./opencode/opencode-cli.js";
export { iterateSessionBlobs } from "./repository/iterate-session-blobs.js";
export {
  createMemorySessionBlobRepository,
  type MemorySessionBlobsOptions,
} from "./repository/memory-session-blobs.js";
export {
  type CreateSessionBlobInput,
  DEFAULT_DELETE_EXPIRED_BATCH,
  DEFAULT_SESSION_BLOB_PAGE_SIZE,
  DEFAULT_SESSION_TTL_MS,
  type DeleteExpiredOptions,
  type ListSessionBlobsOptions,
  MAX_DELETE_EXPIRED_BATCH,
  MAX_SESSION_BLOB_PAGE_SIZE,
  type RepositoryOperationOptions,
  type SessionBlobPage,
  type SessionBlobRecord,
  type SessionBlobRepository,
  type SessionBlobSummary,
  type SessionBlobSummaryPage,
} from "./repository/session-blob-repository.js";
export {
  MAX_OWNER_LENGTH,
  MAX_REQUEST_ID_LENGTH,
  type SessionBlobLimits,
} from "./repository/validate-input.js";
export { sessionIdFromMessage, type TrackedMessages, trackSessionId } from "./sdk/track-session-id.js";
// The Agent SDK's SessionStore: what its users pass and get. What a backend of its own needs
// (key and entry helpers, the summary fold) is in `@stowage/sessions/backend`.
export {
  type CompleteSessionStore,
  createObjectSessionStore,
  DEFAULT_COMPACT_AFTER_PARTS,
  DEFAULT_SESSION_STORE_PREFIX,
  MAX_APPEND_BYTES,
  MAX_APPEND_ENTRIES,
  MAX_ENTRY_BYTES,
  MAX_ENTRY_UUID_LENGTH,
  MAX_PROJECT_KEY_LENGTH,
  MAX_SESSION_STORE_PREFIX_BYTES,
  MAX_SUBPATH_BYTES,
  type ObjectSessionStore,
  type ObjectSessionStoreOptions,
  type SessionKey,
  type SessionStoreEntry,
  type SessionSummaryEntry,
  type StoreOperationOptions,
} from "./session-store/index.js";
export {
  type FromTransportOptions,
  fromTransport,
  type SessionTransport,
  type TransportedSession,
  toTransport,
} from "./transport/transport.js";
