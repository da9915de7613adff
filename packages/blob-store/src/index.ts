export type { BlobLayout } from "./blob-layout.js";
export {
  type BlobInfo,
  type BlobListPage,
  type BlobPutResult,
  type BlobStore,
  type BlobStoreOptions,
  createBlobStore,
} from "./blob-store.js";
export {
  type CollectGarbageOptions,
  collectGarbage,
  DEFAULT_GC_GRACE_MS,
  DEFAULT_STAGING_GRACE_MS,
  DEFAULT_TIMESTAMP_SLACK_MS,
  type GarbageCollectionReport,
} from "./gc/collect-garbage.js";
export { type ScanFilesOptions, scanFilesForBlobRefs } from "./gc/file-refs.js";
export { type ScanObjectStoreOptions, scanObjectStoreForBlobRefs } from "./gc/object-store-refs.js";
export { type RefScanSource, scanBytesForBlobRefs } from "./gc/ref-scanner.js";
export type { BlobRootSource, BlobRoots, BlobRootsOption } from "./gc/root-sources.js";
export { scanSessionFilesForBlobRefs } from "./gc/session-file-refs.js";
export { createOwnedBlobStore, type OwnedBlobStore, type OwnedBlobStoreOptions } from "./owned-blob-store.js";
export { MAX_ENTRY_DEPTH } from "./persistence/entry-walker.js";
export {
  BLOB_EXTERNALIZE_THRESHOLD,
  DEFAULT_MAX_STRING_CHARS,
  IMAGE_KEPT_INLINE_REASONS,
  type ImageKeptInlineReason,
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
