/** Work units per run (bytes or operations) for the printed throughput. */
export interface BenchUnits {
  count: number;
  label: "B" | "ops";
}

/**
 * What the median ratio (their time / our time, > 1 = ours faster) must reach. `speed`: at least
 * `min` (">= 0.8x the baseline"). `time`: our time at most `max` times theirs ("<= 1.5x the
 * baseline"), the same test as a speed of at least 1/max, printed the way the target is said.
 */
export type BenchTarget = { kind: "speed"; min: number } | { kind: "time"; max: number };

/** Which run is being set up: the contender's name and the round (-1 for the warm-up). */
export interface RunInfo {
  contender: string;
  round: number;
}

/** One of the runs compared with ours: the raw operation doing the same work, or a peer library. */
export interface Contender<S> {
  name: string;
  /** `baseline`: the raw operation (node:fs, one SQL statement); `peer`: what a user would pick instead. */
  kind: "baseline" | "peer";
  run(state: S): Promise<unknown>;
  /** What the median ratio against ours must reach; without one the row is shown, not judged. */
  target?: BenchTarget;
  /** One line printed under the row: what the peer does and does not do (e.g. "no fsync"). */
  note?: string;
}

/**
 * One case: ours and every contender, each run once per round in an order rotated every round,
 * each timed run on fresh state with the machine settled first (see `runComparisons`).
 */
export interface Comparison<S = undefined> {
  name: string;
  units?: BenchUnits;
  /** Rounds; each runs every contender once. Default 7. */
  rounds?: number;
  /** One untimed run of each contender before the rounds (JIT, page cache). Default true. */
  warmup?: boolean;
  /**
   * Makes the state one run works on, untimed, before every run (a new directory, a new
   * database, a new store object), so that no run meets what an earlier one left.
   */
  fresh?(run: RunInfo): Promise<S> | S;
  /** Removes what `fresh` made, untimed, after each run. */
  dispose?(state: S, run: RunInfo): Promise<void> | void;
  /** What `fresh` gives each run, in words, printed with the case: "a new directory and store". */
  freshState?: string;
  ours(state: S): Promise<unknown>;
  against: Contender<S>[];
  /** An absolute target besides the ratios: our median must stay under this many milliseconds. */
  maxOursMs?: number;
  /** Once before the case's first run, untimed. */
  setup?(): Promise<void> | void;
  /** Once after the case. */
  cleanup?(): Promise<void> | void;
  /** Lines printed under the case: where a figure comes from, why it differs from a README. */
  notes?: string[];
  /** Set by `growth()`: the series this case is one size of. */
  series?: SeriesMember;
}

/** One size of a series made by `growth()`, whose per-item cost is printed after its last size. */
export interface SeriesMember {
  name: string;
  size: number;
  /** What one item is, for the printed cost: "key", "entry", "MiB". */
  unit: string;
  /** Items one run handles at this size (the cost printed is time / items). */
  items: number;
  last: boolean;
}

/** A comparison of any state type, as `runComparisons` takes a list of them. */
// biome-ignore lint/suspicious/noExplicitAny: each case's state type is its own; the runner only passes it through.
export type AnyComparison = Comparison<any>;

/** Keeps `S` checked inside one case while a list of cases mixes state types. */
export function compare<S = undefined>(comparison: Comparison<S>): AnyComparison {
  return comparison;
}
