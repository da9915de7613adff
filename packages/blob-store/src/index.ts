export { type BlobLayout, STAGING_SEGMENT } from "./blob-layout.js";
export { BLOB_REF_PREFIX, formatBlobRef, isBlobRef, parseBlobRef, toBlobHash } from "./blob-ref.js";
export {
  type BlobInfo,
  type BlobListPage,
  type BlobPutResult,
  type BlobStore,
  type BlobStoreOptions,
  createBlobStore,
} from "./blob-store.js";
export {
  type BlobRoots,
  type CollectGarbageOptions,
  collectGarbage,
  DEFAULT_GC_GRACE_MS,
  DEFAULT_TIMESTAMP_SLACK_MS,
  type GarbageCollectionReport,
} from "./gc/collect-garbage.js";
export { SESSION_FILE_PATTERN, scanSessionFilesForBlobRefs } from "./gc/session-file-refs.js";
export type { ImagePayload } from "./persistence/entry-walker.js";
export {
  BLOB_EXTERNALIZE_THRESHOLD,
  DEFAULT_MAX_STRING_CHARS,
  PRESERVED_FIELDS,
  type PrepareEntryOptions,
  prepareEntryForPersistence,
  TRANSIENT_FIELDS,
} from "./persistence/prepare-entry.js";
export {
  DEFAULT_RESOLVE_CONCURRENCY,
  type ResolveBlobRefsOptions,
  resolveBlobRefs,
} from "./persistence/resolve-refs.js";
export { TRUNCATION_NOTICE } from "./persistence/truncate-string.js";
