export {
  type CapturedSession,
  type CaptureSessionOptions,
  captureSession,
} from "./archive/capture-session.js";
export { LEGACY_OWNER_PROBE_BYTES, type SkippedFile } from "./archive/collect-files.js";
export { entryPathProblem, LEGACY_AGENT_FILE_PATTERN } from "./archive/entry-path.js";
export {
  ARCHIVE_FORMAT_VERSION,
  ARCHIVE_MAGIC,
  ARCHIVE_PREAMBLE_BYTES,
  DEFAULT_MAX_SESSION_BYTES,
  MAX_ARCHIVE_ENTRIES,
  MAX_MANIFEST_BYTES,
  type SessionArchiveEntry,
  type SessionArchiveManifest,
} from "./archive/manifest.js";
export {
  type RestoredSession,
  type RestoreSessionOptions,
  restoreSession,
} from "./archive/restore-session.js";
export {
  assertPositiveInteger,
  assertSessionArchive,
  DEFAULT_MAX_SESSION_BLOB_BYTES,
  type SessionArchive,
} from "./archive/session-archive.js";
export {
  assertProjectKey,
  claudeProjectKey,
  MAX_PROJECT_KEY_PREFIX,
  PROJECT_KEY_PATTERN,
  sanitizeProjectPath,
} from "./claude/project-key.js";
export { assertSessionId, isSessionId, SESSION_ID_PATTERN } from "./claude/session-id.js";
export {
  type ClaudeSessionLocation,
  type ClaudeSessionLocationOptions,
  claudeSessionLocation,
  defaultClaudeConfigDir,
} from "./claude/session-location.js";
export {
  assertSessionCodec,
  availableCodecs,
  CODEC_CHUNK_BYTES,
  DEFAULT_BROTLI_QUALITY,
  DEFAULT_BROTLI_WINDOW_BITS,
  DEFAULT_GZIP_LEVEL,
  DEFAULT_SESSION_CODEC,
  DEFAULT_ZSTD_LEVEL,
  isCodecAvailable,
  isSessionCodec,
  SESSION_CODECS,
  type SessionCodec,
} from "./codec/codecs.js";
export { compressChunks, type DecompressOptions, decompressBounded } from "./codec/compress.js";
export {
  createMemorySessionBlobRepository,
  type MemorySessionBlobsOptions,
} from "./repository/memory-session-blobs.js";
export {
  type CreateSessionBlobInput,
  DEFAULT_DELETE_EXPIRED_BATCH,
  DEFAULT_SESSION_TTL_MS,
  type DeleteExpiredOptions,
  MAX_DELETE_EXPIRED_BATCH,
  type RepositoryOperationOptions,
  type SessionBlobRecord,
  type SessionBlobRepository,
} from "./repository/session-blob-repository.js";
export {
  AGENT_TYPE_PATTERN,
  assertAgentType,
  assertRequestId,
  MAX_REQUEST_ID_LENGTH,
  normalizeCreateInput,
  REQUEST_ID_PATTERN,
  resolveDeleteExpiredOptions,
  resolveSessionBlobLimits,
  type SessionBlobLimits,
} from "./repository/validate-input.js";
export { sessionIdFromMessage, type TrackedMessages, trackSessionId } from "./sdk/track-session-id.js";
export {
  type FromTransportOptions,
  fromTransport,
  type SessionTransport,
  toTransport,
} from "./transport/transport.js";
