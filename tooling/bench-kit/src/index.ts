export { peakRssDuring } from "./peak-rss.js";
export { type BenchCase, type BenchTarget, runBenchmarks } from "./run-benchmarks.js";
