export { TEMP_FILE_PREFIX } from "@stowage/core/fs";
export { type FsDirectUpload, type FsDirectUrlOptions, SHA256_HEADER } from "./direct/direct-transfer.js";
export { MIN_SIGNING_SECRET_BYTES } from "./direct/signature.js";
export {
  createFsObjectStore,
  DEFAULT_STALE_TEMP_FILE_MS,
  type FsObjectStore,
  type FsObjectStoreOptions,
  type FsObjectStoreWithDirectUrls,
} from "./fs-object-store.js";
