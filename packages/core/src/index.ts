export { abortedError, throwIfAborted } from "./abort.js";
export { parseBearerToken } from "./bearer-token.js";
export { mapConcurrent } from "./concurrency.js";
export { contentDisposition } from "./content-disposition.js";
export {
  BLOB_REF_PREFIX,
  type ContentInfo,
  type ContentPutResult,
  type ContentStore,
  formatBlobRef,
  isBlobRef,
  parseBlobRef,
  toBlobHash,
} from "./content-store.js";
export {
  assertContentType,
  type ContentType,
  formatContentType,
  MAX_CONTENT_TYPE_LENGTH,
  normalizeContentType,
  parseContentType,
} from "./content-type.js";
export {
  type ControlSequenceState,
  endOfOpenControlSequence,
  OUTSIDE_CONTROL_SEQUENCE,
  scanControlSequences,
} from "./control-sequence-scanner.js";
export { type DataUrl, parseDataUrl } from "./data-url.js";
export {
  type DriverListOptions,
  defineObjectStore,
  MAX_SIGNED_URL_SECONDS,
  type ObjectStoreDriver,
} from "./define-object-store.js";
export { describeValue } from "./describe-value.js";
export { type Env, envFlag, envPositiveInteger, envPositiveNumber, envString, envUrl } from "./env.js";
export {
  type ErrorBody,
  HTTP_STATUS_BY_CODE,
  STOWAGE_ERROR_CODES,
  StowageError,
  type StowageErrorCode,
  type StowageErrorOptions,
} from "./errors.js";
export { errorBody, errorFromResponse, errorResponse, MAX_ERROR_BODY_BYTES } from "./http-errors.js";
export { type JsonBudget, type ReadJsonOptions, readJsonWithinBudget } from "./json-budget.js";
export {
  assertKeyDirectoryPrefix,
  assertSafeKey,
  assertSafeKeyPrefix,
  assertSafePathSegment,
  isSafeKey,
  joinKey,
  keyProblem,
  MAX_KEY_BYTES,
  MAX_SEGMENT_BYTES,
  pathSegmentProblem,
} from "./keys.js";
export { largest, pushAll } from "./large-arrays.js";
export { consoleLogger, type Logger } from "./logger.js";
export { createMemoryObjectStore, type MemoryObjectStoreOptions } from "./memory-object-store.js";
export {
  assertNotification,
  createMemoryNotifier,
  MAX_NOTIFY_MESSAGE_BYTES,
  type Notifier,
  type Unsubscribe,
} from "./notifier.js";
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
export { assertPrincipal, type Principal, samePrincipal } from "./principal.js";
export { assertSafeId, isSafeId, MAX_SAFE_ID_LENGTH, SAFE_ID_PATTERN, safeIdProblem } from "./safe-id.js";
export { sanitizeText } from "./sanitize-text.js";
export { assertSessionId, isSessionId, MAX_SESSION_ID_LENGTH, sessionIdProblem } from "./session-id.js";
export { assertSha256Hex, isSha256Hex, SHA256_HEX_PATTERN, sha256Hex } from "./sha256.js";
export { sniffImageType } from "./sniff-image-type.js";
export {
  bytesToStream,
  concatBytes,
  isReadableStream,
  type ReadStreamOptions,
  readStreamToBytes,
} from "./streams.js";
export { errnoOf, fromSystemError } from "./system-errors.js";
export { compareUtf8, isWellFormedUnicode, utf8ByteLength, utf8Encode } from "./utf8.js";
