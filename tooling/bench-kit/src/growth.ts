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
}

/**
 * One case per size, run like any other; after the largest, the cost per item of every contender
 * at every size is printed with how much it grew from the smallest size to the largest (1.00x:
 * flat).
 */
export function growth<S>(options: GrowthOptions<S>): AnyComparison[] {
  return options.sizes.map((size, index) => ({
    ...options.make(size),
    series: {
      name: options.name,
      size,
      unit: options.unit,
      items: options.items?.(size) ?? size,
      last: index === options.sizes.length - 1,
    },
  }));
}
