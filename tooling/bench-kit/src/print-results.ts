import type { BenchTarget, BenchUnits, SeriesMember } from "./comparison.js";

export interface ContenderResult {
  name: string;
  kind: "ours" | "baseline" | "peer";
  /** Each round's time, in round order. */
  ms: number[];
  /** Each round's time of this contender / ours in the same round (not for ours). */
  ratios?: number[];
  target?: BenchTarget;
  /** Whether the median ratio meets the target; undefined without one. */
  met?: boolean;
  note?: string;
}

export interface CaseResult {
  name: string;
  rounds: number;
  freshState: string | undefined;
  units: BenchUnits | undefined;
  maxOursMs: number | undefined;
  notes: string[];
  /** Ours first. */
  contenders: ContenderResult[];
  series: SeriesMember | undefined;
  met: boolean;
  /** The case's own wall time, fresh states and warm-up included: what a run of the bench spends on it. */
  wallMs?: number;
}

export const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** `median (min-max)` of a list, each formatted by `format`. */
export function spread(values: readonly number[], format: (value: number) => string): string {
  return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const times = (value: number) => value.toFixed(2);

function throughput(msValue: number, units: BenchUnits | undefined): string {
  if (!units) return "";
  const perSecond = (units.count / msValue) * 1000;
  if (units.label === "B") return `${(perSecond / 1024 / 1024).toFixed(1)} MiB/s`;
  return `${Math.round(perSecond).toLocaleString("en-US")} ops/s`;
}

function targetText(target: BenchTarget): string {
  return target.kind === "speed" ? `>= ${target.min}x` : `ours <= ${target.max}x their time`;
}

/** `ours`, `baseline <name>`, `peer <name>`. */
const labelOf = (contender: ContenderResult) =>
  contender.kind === "ours" || !contender.name ? contender.kind : `${contender.kind} ${contender.name}`;

function contenderLine(result: CaseResult, contender: ContenderResult, width: number): string {
  const time = `${spread(contender.ms, ms)} ms`;
  const head = `    ${labelOf(contender).padEnd(width)}  ${throughput(median(contender.ms), result.units).padStart(15)}  ${time.padEnd(26)}`;
  if (!contender.ratios) return head.trimEnd();
  const verdict = contender.target
    ? `  target ${targetText(contender.target)}: ${contender.met ? "met" : "MISSED"}`
    : "  (no target)";
  return `${head}ratio ${spread(contender.ratios, times).replace(" ", "x ")}${verdict}`;
}

export function printCase(result: CaseResult): void {
  const fresh = result.freshState ? `each run on ${result.freshState}` : "no fresh state between runs";
  const took = result.wallMs === undefined ? "" : `; the case took ${(result.wallMs / 1000).toFixed(0)} s`;
  const lines = [
    `- ${result.name}`,
    `    ${result.rounds} ${result.rounds === 1 ? "round" : "rounds, rotated"}; ${fresh}; ratio = their time / ours (> 1: ours faster)${took}`,
  ];
  const width = Math.max(...result.contenders.map((contender) => labelOf(contender).length));
  for (const contender of result.contenders) {
    lines.push(contenderLine(result, contender, width));
    if (contender.note) lines.push(`      ${" ".repeat(width)}(${contender.note})`);
  }
  if (result.maxOursMs !== undefined) {
    const oursMs = median(result.contenders[0]!.ms);
    lines.push(`    ours < ${result.maxOursMs} ms: ${oursMs < result.maxOursMs ? "met" : "MISSED"}`);
  }
  for (const note of result.notes) lines.push(`    note: ${note}`);
  console.log(lines.join("\n"));
}

function perItem(msValue: number, size: number): string {
  if (Number.isNaN(msValue)) return "not run";
  const us = (msValue * 1000) / size;
  return us >= 100 ? `${us.toFixed(0)} us` : `${us.toFixed(2)} us`;
}

/** Cost per item of each contender at each size of a series, and how much it grew from the smallest size to the largest. */
export function printSeries(results: readonly CaseResult[]): void {
  const first = results[0];
  if (!first?.series) return;
  const { name, unit } = first.series;
  console.log(`  cost per ${unit}, ${name} (median time / ${unit}s), at each size:`);
  for (const contender of first.contenders) {
    const costs = results.map((result) => {
      const same = result.contenders.find(
        (other) => other.name === contender.name && other.kind === contender.kind,
      );
      return {
        size: result.series!.size,
        items: result.series!.items,
        ms: same ? median(same.ms) : Number.NaN,
      };
    });
    const cells = costs.map(
      (cost) => `${cost.size.toLocaleString("en-US")}: ${perItem(cost.ms, cost.items)}`,
    );
    const smallest = costs[0]!;
    const largest = costs[costs.length - 1]!;
    const growth = largest.ms / largest.items / (smallest.ms / smallest.items);
    const label = labelOf(contender);
    const grew = Number.isNaN(growth) ? "" : `  (largest / smallest per ${unit}: ${growth.toFixed(2)}x)`;
    console.log(`    ${label}: ${cells.join(" | ")}${grew}`);
  }
}
