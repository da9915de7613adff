import type { AnyComparison, Comparison } from "./comparison.js";

export interface GrowthOptions<S> {
  /** The series' name, printed with the cost per item. */
  name: string;
  /** Item counts (or sizes) from smallest to largest: 1_000, 10_000, 100_000. */
  sizes: readonly number[];
  /** What one item is: "key", "entry", "MiB". */
  unit: string;
  /** Items one run handles at a size, when that is not the size itself (4 objects of `size` KiB: `size * 4` KiB). */
  items?(size: number): number;
  /** The case at one size. */
  make(size: number): Comparison<S>;
  /**
   * The largest size runs without a warm-up run and without the peers that have no target (the
   * raw baselines and the targeted peers still run, so the size still prints our figure, a
   * baseline and the peers it is judged against): for a case whose fresh state is what costs
   * (100,000 files written, synced and removed before every run, ~30 s each). The cost per item
   * shows a dropped peer's largest size as not run.
   */
  leanLargest?: boolean;
}

/**
 * One case per size, run like any other; after the largest, the cost per item of every contender
 * at every size is printed with how much it grew from the smallest size to the largest (1.00x:
 * flat).
 */
export function growth<S>(options: GrowthOptions<S>): AnyComparison[] {
  const largest = options.sizes.length - 1;
  return options.sizes.map((size, index) => ({
    ...(options.leanLargest && index === largest ? lean(options.make(size)) : options.make(size)),
    series: {
      name: options.name,
      size,
      unit: options.unit,
      items: options.items?.(size) ?? size,
      last: index === largest,
    },
  }));
}

function lean<S>(comparison: Comparison<S>): Comparison<S> {
  return {
    ...comparison,
    warmup: false,
    against: comparison.against.filter(
      (contender) => contender.kind === "baseline" || contender.target !== undefined,
    ),
  };
}
