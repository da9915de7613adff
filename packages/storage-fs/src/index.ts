export {
  type FsDirectDownload,
  type FsDirectUpload,
  type FsDirectUrlOptions,
  SHA256_HEADER,
} from "./direct/direct-transfer.js";
export type { StoreWithDirectUrls } from "./direct/direct-urls-for.js";
export {
  createFsObjectStore,
  type FsObjectStore,
  type FsObjectStoreOptions,
  type FsObjectStoreWithDirectUrls,
} from "./fs-object-store.js";
