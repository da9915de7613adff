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
  type GarbageCollectionProgress,
  type GarbageCollectionReport,
} from "./gc/collect-garbage.js";
export { type ScanFilesOptions, scanFilesForBlobRefs } from "./gc/file-refs.js";
export { type ScanObjectStoreOptions, scanObjectStoreForBlobRefs } from "./gc/object-store-refs.js";
export type { OwnerMarksLocation } from "./gc/owner-marks.js";
export { type RefScanSource, scanBytesForBlobRefs } from "./gc/ref-scanner.js";
export type { BlobRootSource, BlobRoots, BlobRootsOption } from "./gc/root-sources.js";
export { scanSessionFilesForBlobRefs } from "./gc/session-file-refs.js";
export { createOwnedBlobStore, type OwnedBlobStore, type OwnedBlobStoreOptions } from "./owned-blob-store.js";
export {
  type ExternalizedEntry,
  type FindPayloadsOptions,
  type FoundEntryPayloads,
  findEntryPayloads,
  type MovedPayload,
  parseMovedPayloads,
  type RestorePayloadsOptions,
  restoreEntryPayloads,
} from "./persistence/moved-payloads.js";
export {
  type ImageKeptInlineReason,
  type PrepareEntryOptions,
  prepareEntryForPersistence,
} from "./persistence/prepare-entry.js";
export { type ResolveBlobRefsOptions, resolveBlobRefs } from "./persistence/resolve-refs.js";
