export { throwIfAborted } from "./abort.js";
export { parseBearerToken } from "./bearer-token.js";
export { mapConcurrent } from "./concurrency.js";
export { contentDisposition } from "./content-disposition.js";
export {
  BLOB_REF_PREFIX,
  type ContentInfo,
  type ContentPutResult,
  type ContentStore,
  formatBlobRef,
  parseBlobRef,
} from "./content-store.js";
export { type ContentType, parseContentType } from "./content-type.js";
export { type DataUrl, parseDataUrl } from "./data-url.js";
export { type DriverListOptions, defineObjectStore, type ObjectStoreDriver } from "./define-object-store.js";
export { describeValue } from "./describe-value.js";
export { type Env, envFlag, envPositiveInteger, envPositiveNumber, envString, envUrl } from "./env.js";
export {
  type ErrorBody,
  StowageError,
  type StowageErrorCode,
  type StowageErrorOptions,
} from "./errors.js";
export { errorBody, errorFromBody, errorFromResponse, errorResponse } from "./http-errors.js";
export { type JsonBudget, type ReadJsonOptions, readJsonWithinBudget } from "./json-budget.js";
export {
  assertKeyDirectoryPrefix,
  assertSafeKey,
  assertSafeKeyPrefix,
  keyProblem,
  pathSegmentProblem,
} from "./keys.js";
export { pushAll } from "./large-arrays.js";
export { consoleLogger, type Logger } from "./logger.js";
export { createMemoryObjectStore, type MemoryObjectStoreOptions } from "./memory-object-store.js";
export { assertNotification, createMemoryNotifier, type Notifier, type Unsubscribe } from "./notifier.js";
export type {
  DirectDownloadRequest,
  DirectUploadRequest,
  IterateOptions,
  KeyListing,
  ListItem,
  ListOptions,
  ListPage,
  MoveOptions,
  ObjectBody,
  ObjectInfo,
  ObjectStore,
  ObjectStoreCapabilities,
  OperationOptions,
  PutOptions,
  PutResult,
  SignedRequest,
} from "./object-store.js";
export { assertPrincipal, type Principal } from "./principal.js";
export { nextTurn, runInSlices, runToEnd, type Steps } from "./run-steps.js";
export { assertSafeId, isSafeId, safeIdProblem } from "./safe-id.js";
export { sanitizeText } from "./sanitize-text.js";
export { assertSessionId, isSessionId } from "./session-id.js";
export { assertSha256Hex, isSha256Hex, sha256Hex } from "./sha256.js";
export { sniffImageType } from "./sniff-image-type.js";
export {
  bytesToStream,
  concatBytes,
  isReadableStream,
  type ReadStreamOptions,
  readStreamToBytes,
} from "./streams.js";
export { errnoOf, fromSystemError } from "./system-errors.js";
export { trashDaysOf } from "./trash-days.js";
export { compareUtf8 } from "./utf8.js";
