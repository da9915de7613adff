export {
  type AnyComparison,
  type BenchTarget,
  type BenchUnits,
  type Comparison,
  type Contender,
  compare,
  type RunInfo,
} from "./comparison.js";
export {
  checkpointDatabase,
  type DatabaseAdmin,
  directoryPerRound,
  type FreshDatabase,
  freshDatabase,
  type RoundDirectory,
  type ScratchSpace,
  scratchSpace,
} from "./fresh-state.js";
export { type GrowthOptions, growth } from "./growth.js";
export { type InstalledPeers, installPeers } from "./install-peers.js";
export { loadAverage, settleMachine } from "./machine-state.js";
export { peakRssDuring } from "./peak-rss.js";
export type { CaseResult, ContenderResult } from "./print-results.js";
export { type ReferenceSource, type ReferenceSourceOptions, referenceSource } from "./reference-source.js";
export { type BenchCase, runBenchmarks } from "./run-benchmarks.js";
export { METHOD, runComparisons } from "./run-comparisons.js";
