import type { PromptWarningKind } from "../metrics/prompt-metrics.js";
import { PROMPT_WARNING_KINDS, type PromptMetricsEntry } from "./prompt-metrics-entry.js";

/** Largest and 95th-percentile value of one measure over a session's turns (`null` without any). */
export interface MeasureSummary {
  max: number | null;
  p95: number | null;
}

/** What a session's metrics add up to. */
export interface PromptMetricsSummary {
  turns: number;
  /** Hot-state tokens per turn. */
  hs_tokens: MeasureSummary;
  /** Estimated prompt tokens per turn; turns whose estimate failed (`null`) are not in it. */
  est_tokens: MeasureSummary;
  /** Turns whose budget check failed. */
  violating_turns: number;
  /** Budget violations over all turns. */
  violations: number;
  /** Turns that raised each warning (a turn over the hot-state warning level counts once under `hot_state_tokens`). */
  over_threshold: Record<PromptWarningKind, number>;
  /** The turn numbers whose budget check failed, for marking them. */
  violation_turns: number[];
}

/** The nearest-rank percentile: the smallest value with at least `p` % of the values at or below it. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summarize(values: number[]): MeasureSummary {
  const sorted = values.sort((a, b) => a - b);
  return { max: sorted.at(-1) ?? null, p95: percentile(sorted, 95) };
}

/** Sums up a session's series: max and p95 hot-state and prompt tokens, violations, turns over each warning threshold. */
export function summarizePromptMetrics(entries: readonly PromptMetricsEntry[]): PromptMetricsSummary {
  const over = Object.fromEntries(PROMPT_WARNING_KINDS.map((kind) => [kind, 0])) as Record<
    PromptWarningKind,
    number
  >;
  const violationTurns: number[] = [];
  let violations = 0;
  for (const entry of entries) {
    for (const kind of new Set(entry.warnings.map((warning) => warning.kind))) over[kind]++;
    if (!entry.record.budget_ok) violationTurns.push(entry.turn);
    violations += entry.record.budget_violations;
  }
  return {
    turns: entries.length,
    hs_tokens: summarize(entries.map((entry) => entry.record.hs_tokens)),
    est_tokens: summarize(
      entries.flatMap((entry) => (entry.record.est_tokens === null ? [] : [entry.record.est_tokens])),
    ),
    violating_turns: violationTurns.length,
    violations,
    over_threshold: over,
    violation_turns: violationTurns,
  };
}
