export { TEMP_FILE_PREFIX } from "@stowage/core/fs";
export { INLINE_CONTENT_TYPES } from "./direct/content-types.js";
export { type FsDirectUrlOptions, SHA256_HEADER } from "./direct/direct-transfer.js";
export { MIN_SIGNING_SECRET_BYTES } from "./direct/signature.js";
export { FILE_STREAM_CHUNK_BYTES } from "./file-stream.js";
export {
  createFsObjectStore,
  DEFAULT_STALE_TEMP_FILE_MS,
  type FsObjectStore,
  type FsObjectStoreOptions,
} from "./fs-object-store.js";
