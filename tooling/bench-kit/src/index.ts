export { peakRssDuring } from "./peak-rss.js";
export { type ReferenceSource, type ReferenceSourceOptions, referenceSource } from "./reference-source.js";
export { type BenchCase, type BenchTarget, runBenchmarks } from "./run-benchmarks.js";
