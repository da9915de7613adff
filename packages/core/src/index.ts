export { abortedError, throwIfAborted } from "./abort.js";
export { mapConcurrent } from "./concurrency.js";
export {
  type DriverListOptions,
  defineObjectStore,
  MAX_CONTENT_TYPE_LENGTH,
  MAX_SIGNED_URL_SECONDS,
  type ObjectStoreDriver,
} from "./define-object-store.js";
export { describeValue } from "./describe-value.js";
export {
  HTTP_STATUS_BY_CODE,
  STOWAGE_ERROR_CODES,
  StowageError,
  type StowageErrorCode,
  type StowageErrorOptions,
} from "./errors.js";
export {
  assertSafeKey,
  assertSafeKeyPrefix,
  assertSafePathSegment,
  isSafeKey,
  joinKey,
  keyPrefixProblem,
  keyProblem,
  MAX_KEY_BYTES,
  MAX_SEGMENT_BYTES,
  pathSegmentProblem,
} from "./keys.js";
export { consoleLogger, type Logger } from "./logger.js";
export { createMemoryObjectStore, type MemoryObjectStoreOptions } from "./memory-object-store.js";
export {
  DEFAULT_LIST_LIMIT,
  type DirectDownloadRequest,
  type DirectUploadRequest,
  type IterateOptions,
  type ListItem,
  type ListOptions,
  type ListPage,
  MAX_CURSOR_LENGTH,
  MAX_LIST_LIMIT,
  type MoveOptions,
  type ObjectBody,
  type ObjectInfo,
  type ObjectStore,
  type ObjectStoreCapabilities,
  type OperationOptions,
  type PutOptions,
  type PutResult,
  type SignedRequest,
} from "./object-store.js";
export { assertSha256Hex, isSha256Hex, SHA256_HEX_PATTERN } from "./sha256.js";
export {
  bytesToStream,
  concatBytes,
  DEFAULT_STREAM_CHUNK_BYTES,
  isReadableStream,
  type ReadStreamOptions,
  readStreamToBytes,
} from "./streams.js";
export { errnoOf, fromSystemError, isAbortError } from "./system-errors.js";
export { compareUtf8, isWellFormedUnicode, utf8ByteLength, utf8Encode } from "./utf8.js";
