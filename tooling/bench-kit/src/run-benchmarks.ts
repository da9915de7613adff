import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

// A full collection before each case, so that garbage an earlier case left (hundreds of MiB in
// some) is not collected during this one's runs. Within a case, each side still pays for its own
// garbage, and the alternating order shares what a run leaves to the next.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/**
 * How a case's ratio is judged. `speed`: baseline time / our time, must be at least `min`
 * (">= 0.8x the baseline"). `time`: our time / baseline time, must be at most `max`
 * ("<= 1.5x the baseline").
 */
export type BenchTarget = { kind: "speed"; min: number } | { kind: "time"; max: number };

export interface BenchCase {
  name: string;
  target: BenchTarget;
  /** An absolute target besides the ratio: our median must stay under this many milliseconds. */
  maxOursMs?: number;
  /** Work units per run (bytes or operations) for the printed figure; default 1 run. */
  units?: { count: number; label: "B" | "ops" };
  /** Rounds; each round runs both sides once, in alternating order. Default 7. */
  rounds?: number;
  /** Run each side once, untimed, before measuring. Default true; turn off for long cases. */
  warmup?: boolean;
  /** Called before every run of either side; not timed. */
  prepare?: () => Promise<void> | void;
  ours: () => Promise<unknown>;
  baseline: () => Promise<unknown>;
  /** Called once after the case. */
  cleanup?: () => Promise<void> | void;
}

interface CaseResult {
  name: string;
  oursMs: number;
  baselineMs: number;
  ratio: number;
  target: BenchTarget;
  maxOursMs: number | undefined;
  met: boolean;
  units: BenchCase["units"];
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function timeOnce(bench: BenchCase, side: () => Promise<unknown>): Promise<number> {
  await bench.prepare?.();
  const start = process.hrtime.bigint();
  await side();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function figure(ms: number, units: BenchCase["units"]): string {
  if (!units) return `${ms.toFixed(1)} ms`;
  const perSecond = (units.count / ms) * 1000;
  if (units.label === "B") return `${(perSecond / 1024 / 1024).toFixed(1)} MiB/s`;
  return `${Math.round(perSecond).toLocaleString("en-US")} ops/s`;
}

function targetText({ target, maxOursMs }: CaseResult): string {
  const ratio = target.kind === "speed" ? `speed >= ${target.min}x` : `time <= ${target.max}x`;
  return maxOursMs === undefined ? ratio : `${ratio}, ours < ${maxOursMs} ms`;
}

/**
 * Runs each case's two sides in alternating order, round after round, so that both see the same
 * machine state; compares medians. Prints a table and exits non-zero when a target is missed.
 */
export async function runBenchmarks(title: string, cases: BenchCase[]): Promise<void> {
  console.log(`\n${title}`);
  const results: CaseResult[] = [];
  for (const bench of cases) {
    const rounds = bench.rounds ?? 7;
    collectGarbage();
    if (bench.warmup ?? true) {
      // One untimed run of each side warms the JIT and the page cache.
      await timeOnce(bench, bench.baseline);
      await timeOnce(bench, bench.ours);
    }
    const ours: number[] = [];
    const baseline: number[] = [];
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        baseline.push(await timeOnce(bench, bench.baseline));
        ours.push(await timeOnce(bench, bench.ours));
      } else {
        ours.push(await timeOnce(bench, bench.ours));
        baseline.push(await timeOnce(bench, bench.baseline));
      }
    }
    await bench.cleanup?.();
    const oursMs = median(ours);
    const baselineMs = median(baseline);
    const ratio = bench.target.kind === "speed" ? baselineMs / oursMs : oursMs / baselineMs;
    const ratioMet = bench.target.kind === "speed" ? ratio >= bench.target.min : ratio <= bench.target.max;
    const met = ratioMet && (bench.maxOursMs === undefined || oursMs < bench.maxOursMs);
    const result = {
      name: bench.name,
      oursMs,
      baselineMs,
      ratio,
      target: bench.target,
      maxOursMs: bench.maxOursMs,
      met,
      units: bench.units,
    };
    results.push(result);
    printResult(result);
  }
  const missed = results.filter((result) => !result.met);
  console.log(
    missed.length === 0 ? "all targets met" : `MISSED: ${missed.map((result) => result.name).join("; ")}`,
  );
  if (missed.length > 0) process.exitCode = 1;
}

function printResult(result: CaseResult): void {
  const kind = result.target.kind === "speed" ? "speed" : "time";
  console.log(
    [
      `- ${result.name}`,
      `    ours     ${figure(result.oursMs, result.units).padStart(16)}   (${result.oursMs.toFixed(1)} ms median)`,
      `    baseline ${figure(result.baselineMs, result.units).padStart(16)}   (${result.baselineMs.toFixed(1)} ms median)`,
      `    ${kind} ratio ${result.ratio.toFixed(2)}x   target ${targetText(result)}   ${result.met ? "met" : "MISSED"}`,
    ].join("\n"),
  );
}
