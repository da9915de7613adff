export { createDirectorySync } from "./directory-sync.js";
export {
  ensureDirectory,
  fsyncDirectory,
  TEMP_FILE_PREFIX,
  type TempFile,
  writeTempFile,
} from "./temp-file.js";
export { type WriteFileAtomicOptions, writeFileAtomic } from "./write-file-atomic.js";
