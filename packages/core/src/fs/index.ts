export {
  descriptorPath,
  type OpenBeneathOptions,
  type OpenedDirectory,
  openDirectoryBeneath,
  symlinkRefused,
} from "./open-beneath.js";
export { type OpenedFile, type OpenFileBeneathOptions, openFileBeneath } from "./open-file-beneath.js";
export { removeTreeBeneath } from "./remove-tree-beneath.js";
export {
  ensureDirectory,
  fsyncDirectory,
  TEMP_FILE_PREFIX,
  type TempFile,
  writeTempFile,
} from "./temp-file.js";
export { type WriteFileAtomicOptions, writeFileAtomic } from "./write-file-atomic.js";
