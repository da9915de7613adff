import { appendFileSync } from "node:fs";
import type { AnyComparison, BenchTarget, RunInfo } from "./comparison.js";
import { loadAverage, settleMachine } from "./machine-state.js";
import { type CaseResult, type ContenderResult, median, printCase, printSeries } from "./print-results.js";

const DEFAULT_ROUNDS = 7;

/** The method every suite uses, printed at its top. */
export const METHOD = [
  "Interleaved: each round runs every contender once, the order rotated by one each round.",
  "Before every timed run (untimed): the case's fresh state, then `sync` and a full GC.",
  "Figures: median (min-max) over the rounds; ratio = their time / our time in the same round (> 1: ours faster).",
];

interface Runner {
  name: string;
  kind: ContenderResult["kind"];
  run(state: unknown): Promise<unknown>;
  target?: BenchTarget;
  note?: string;
}

/** Settings from the environment: `BENCH_FILTER` (a case-name substring), `BENCH_ROUNDS`, `BENCH_JSON` (a file to append results to). */
function settings(env: NodeJS.ProcessEnv) {
  const rounds = env.BENCH_ROUNDS ? Number(env.BENCH_ROUNDS) : undefined;
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds > 0)) {
    throw new Error(`BENCH_ROUNDS must be a positive integer, got ${env.BENCH_ROUNDS}`);
  }
  return { filter: env.BENCH_FILTER?.toLowerCase(), rounds, json: env.BENCH_JSON };
}

async function timedRun(bench: AnyComparison, runner: Runner, round: number): Promise<number> {
  const info: RunInfo = { contender: runner.name, round };
  const state = await bench.fresh?.(info);
  settleMachine();
  const start = process.hrtime.bigint();
  await runner.run(state);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  await bench.dispose?.(state, info);
  return ms;
}

function meets(target: BenchTarget, ratio: number): boolean {
  return target.kind === "speed" ? ratio >= target.min : 1 / ratio <= target.max;
}

async function runCase(bench: AnyComparison, rounds: number): Promise<CaseResult> {
  const runners: Runner[] = [
    { name: "ours", kind: "ours", run: (state) => bench.ours(state) },
    ...bench.against.map((contender) => ({ ...contender, run: (state: unknown) => contender.run(state) })),
  ];
  await bench.setup?.();
  try {
    if (bench.warmup ?? true) for (const runner of runners) await timedRun(bench, runner, -1);
    const times = runners.map(() => [] as number[]);
    for (let round = 0; round < rounds; round++) {
      for (let step = 0; step < runners.length; step++) {
        const index = (step + round) % runners.length;
        times[index]!.push(await timedRun(bench, runners[index]!, round));
      }
    }
    const ours = times[0]!;
    const contenders = runners.map((runner, index): ContenderResult => {
      const own = times[index]!;
      const result: ContenderResult = { name: runner.name, kind: runner.kind, ms: own, note: runner.note };
      if (index === 0) return result;
      const ratios = own.map((ms, round) => ms / ours[round]!);
      return {
        ...result,
        ratios,
        target: runner.target,
        met: runner.target === undefined ? undefined : meets(runner.target, median(ratios)),
      };
    });
    const withinMs = bench.maxOursMs === undefined || median(ours) < bench.maxOursMs;
    return {
      name: bench.name,
      rounds,
      freshState: bench.freshState,
      units: bench.units,
      maxOursMs: bench.maxOursMs,
      notes: bench.notes ?? [],
      contenders,
      series: bench.series,
      met: withinMs && contenders.every((contender) => contender.met !== false),
    };
  } finally {
    await bench.cleanup?.();
  }
}

/**
 * Runs each case interleaved: every round runs ours and each contender once, in an order rotated
 * by one each round; before every timed run the case's `fresh` state is made, then `sync` and a
 * full GC (none of it timed). Prints the method, the load average, per case the medians (min-max)
 * and the ratio of each contender's time to ours in the same round, and for a `growth()` series
 * the cost per item at each size. Exits non-zero when a target is missed. Returns the results.
 */
export async function runComparisons(title: string, cases: readonly AnyComparison[]): Promise<CaseResult[]> {
  const { filter, rounds: roundsOverride, json } = settings(process.env);
  console.log(`\n${title}`);
  for (const line of METHOD) console.log(`  ${line}`);
  console.log(`  At start: ${loadAverage()}; node ${process.version}.`);
  const results: CaseResult[] = [];
  const suiteStarted = performance.now();
  for (const bench of cases) {
    if (
      filter &&
      !bench.name.toLowerCase().includes(filter) &&
      !bench.series?.name.toLowerCase().includes(filter)
    )
      continue;
    const started = performance.now();
    const result = await runCase(bench, roundsOverride ?? bench.rounds ?? DEFAULT_ROUNDS);
    result.wallMs = performance.now() - started;
    results.push(result);
    printCase(result);
    if (bench.series?.last) printSeries(results.filter((other) => other.series?.name === bench.series!.name));
    if (json)
      appendFileSync(json, `${JSON.stringify({ suite: title, ...result, at: new Date().toISOString() })}\n`);
  }
  console.log(
    `  At end: ${loadAverage()}; the suite took ${((performance.now() - suiteStarted) / 60_000).toFixed(1)} min.`,
  );
  const missed = results.filter((result) => !result.met);
  console.log(
    missed.length === 0 ? "all targets met" : `MISSED: ${missed.map((result) => result.name).join("; ")}`,
  );
  if (missed.length > 0) process.exitCode = 1;
  return results;
}
