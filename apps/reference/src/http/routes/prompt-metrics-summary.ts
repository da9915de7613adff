import type { PromptMetricsEntry, PromptWarningKind } from "@stowage/hot-state";

/** Largest and 95th-percentile (nearest-rank) value of one measure over a session's turns (`null` without any). */
export interface MeasureSummary {
  max: number | null;
  p95: number | null;
}

/** What a page of a session's metrics adds up to: the `summary` of the prompt-metrics route. */
export interface PromptMetricsSummary {
  turns: number;
  hs_tokens: MeasureSummary;
  /** Turns whose estimate failed (`null`) are not in it. */
  est_tokens: MeasureSummary;
  /** Turns whose budget check failed. */
  violating_turns: number;
  /** Budget violations over all turns. */
  violations: number;
  /** Turns that raised each warning (a turn counts once per kind). */
  over_threshold: Record<PromptWarningKind, number>;
  /** The turn numbers whose budget check failed, for marking them. */
  violation_turns: number[];
}

function summarize(values: number[]): MeasureSummary {
  const sorted = values.sort((a, b) => a - b);
  // The nearest rank: the smallest value with at least 95 % of the values at or below it.
  const p95 = sorted.length === 0 ? null : sorted[Math.max(0, Math.ceil(0.95 * sorted.length) - 1)]!;
  return { max: sorted.at(-1) ?? null, p95 };
}

/** Sums up a session's series: max and p95 hot-state and prompt tokens, violations, turns over each warning threshold. */
export function summarizePromptMetrics(entries: readonly PromptMetricsEntry[]): PromptMetricsSummary {
  // Every kind, in the order hot-state reports them, so that a kind no turn raised shows 0.
  const over: Record<PromptWarningKind, number> = {
    hot_state_tokens: 0,
    artifact_index_entries: 0,
    prompt_tokens: 0,
    budget_violations: 0,
  };
  for (const entry of entries) {
    for (const kind of new Set(entry.warnings.map((warning) => warning.kind))) over[kind]++;
  }
  const violationTurns = entries.filter((entry) => !entry.record.budget_ok).map((entry) => entry.turn);
  return {
    turns: entries.length,
    hs_tokens: summarize(entries.map((entry) => entry.record.hs_tokens)),
    est_tokens: summarize(
      entries.flatMap(({ record }) => (record.est_tokens === null ? [] : [record.est_tokens])),
    ),
    violating_turns: violationTurns.length,
    violations: entries.reduce((sum, entry) => sum + entry.record.budget_violations, 0),
    over_threshold: over,
    violation_turns: violationTurns,
  };
}
