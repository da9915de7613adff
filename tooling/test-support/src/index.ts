export {
  type DirectorySwapper,
  startDirectorySwapper,
  startWorkerLoop,
  type WorkerLoop,
} from "./directory-swapper.js";
export { inCi, isRoot } from "./environment.js";
export { FS_JOURNAL_DIRECTORY, filesUnder, withoutJournal } from "./files-under.js";
export { countTokensHeuristic } from "./heuristic-token-counter.js";
export {
  type ClaudeScreenshotSessionOptions,
  claudeReadImageFields,
  claudeScreenshotSession,
  realTranscriptsWithImages,
  screenshotPng,
} from "./image-sessions.js";
export { type IsolatedImport, type IsolatedProject, isolatedSources } from "./isolated-sources.js";
export { keysThroughWrapper } from "./keys-through-wrapper.js";
export {
  jsonParseCostMs,
  type LoopHolds,
  mainThreadCpuMs,
  waitingForCoreMs,
  watchLoopHolds,
} from "./loop-holds.js";
export { encodePng, type Rgb } from "./png.js";
export {
  REAL_TRANSCRIPTS_DIR,
  type RealRecord,
  type RealTranscripts,
  realTranscripts,
} from "./real-transcripts.js";
export { installedPackages, recordResolvedModules } from "./resolved-modules.js";
export { type ChildOptions, type ChildResult, nodeArgsFor, runChild, spawnChild } from "./run-child.js";
export { s3ClientOptions, s3TestEnv } from "./s3-test-env.js";
export { tempDirectory } from "./temp-directory.js";
