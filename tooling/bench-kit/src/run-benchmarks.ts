import type { AnyComparison, BenchTarget } from "./comparison.js";
import { runComparisons } from "./run-comparisons.js";

/**
 * @deprecated The first API (ours against one baseline), kept while benches move to
 * `runComparisons`; it now runs through it (rotated rounds, `sync` and a full GC before every run).
 */
export interface BenchCase {
  name: string;
  target: BenchTarget;
  maxOursMs?: number;
  units?: { count: number; label: "B" | "ops" };
  rounds?: number;
  warmup?: boolean;
  /** Called before every run of either side; not timed. */
  prepare?: () => Promise<void> | void;
  ours: () => Promise<unknown>;
  baseline: () => Promise<unknown>;
  cleanup?: () => Promise<void> | void;
}

/** @deprecated Use `runComparisons`; this maps each case to a comparison with one baseline. */
export async function runBenchmarks(title: string, cases: BenchCase[]): Promise<void> {
  const comparisons: AnyComparison[] = cases.map((bench) => ({
    name: bench.name,
    units: bench.units,
    rounds: bench.rounds,
    warmup: bench.warmup,
    maxOursMs: bench.maxOursMs,
    freshState: bench.prepare ? "what the case's prepare() makes" : undefined,
    fresh: bench.prepare ? async () => void (await bench.prepare!()) : undefined,
    ours: () => bench.ours(),
    against: [{ name: "", kind: "baseline", run: () => bench.baseline(), target: bench.target }],
    cleanup: bench.cleanup,
  }));
  await runComparisons(title, comparisons);
}
