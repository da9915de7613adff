export { TEMP_FILE_PREFIX } from "@stowage/core/fs";
export { FILE_STREAM_CHUNK_BYTES } from "./file-stream.js";
export {
  createFsObjectStore,
  DEFAULT_STALE_TEMP_FILE_MS,
  type FsObjectStore,
  type FsObjectStoreOptions,
} from "./fs-object-store.js";
