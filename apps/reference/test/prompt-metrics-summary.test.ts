// The summary the prompt-metrics route returns beside each page of a session's series.
import type { PromptMetricsEntry } from "@stowage/hot-state";
import { describe, expect, it } from "vitest";
import { summarizePromptMetrics } from "../src/http/routes/prompt-metrics-summary.js";

describe("summarizePromptMetrics", () => {
  const entry = (turn: number, hs: number, est: number | null, kinds: string[], ok = true) =>
    ({
      turn,
      record: { hs_tokens: hs, est_tokens: est, budget_ok: ok, budget_violations: ok ? 0 : 2 },
      warnings: kinds.map((kind) => ({ kind })),
    }) as unknown as PromptMetricsEntry;

  it("gives max and nearest-rank p95 of hot-state and prompt tokens, violations and turns over each threshold", () => {
    // 20 turns with 10, 20, …, 200 hot-state tokens: p95 is the 19th value (ceil(0.95 × 20)).
    const entries = Array.from({ length: 20 }, (_, i) =>
      entry(
        i + 1,
        (i + 1) * 10,
        i === 4 ? null : 1000 + i,
        i >= 17 ? ["hot_state_tokens", "hot_state_tokens"] : [],
      ),
    );
    entries.push(entry(21, 5, 9000, ["prompt_tokens", "budget_violations"], false));
    expect(summarizePromptMetrics(entries)).toEqual({
      turns: 21,
      hs_tokens: { max: 200, p95: 190 },
      // 20 estimates (turn 5 failed): 1000…1019 without 1004, and 9000; ceil(0.95 × 20) = 19th.
      est_tokens: { max: 9000, p95: 1019 },
      violating_turns: 1,
      violations: 2,
      over_threshold: {
        hot_state_tokens: 3,
        artifact_index_entries: 0,
        prompt_tokens: 1,
        budget_violations: 1,
      },
      violation_turns: [21],
    });
  });

  it("sums up an empty series", () => {
    expect(summarizePromptMetrics([])).toMatchObject({ turns: 0, hs_tokens: { max: null, p95: null } });
  });
});
