import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { buildHotState } from "../../src/hot-state/build-hot-state.js";
import { measurePrompt, promptBudget } from "../../src/metrics/prompt-metrics.js";
import { countTokensExact } from "../../src/tokens/token-counter.js";
import { captureLogger } from "../capture-logger.js";
import { hexIds } from "../corpora.js";

const ids = hexIds(20);
const hotState = buildHotState({
  session_id: "sess-1",
  run_id: "run-1",
  artifact_index: [
    { artifact_id: ids[0]!, type: "code" },
    { artifact_id: ids[1]!, type: "doc" },
    { artifact_id: ids[2]!, type: "code" },
  ],
});
const byChars = (text: string) => text.length;

describe("measurePrompt", () => {
  it("builds the prompt_metrics record", () => {
    const logger = captureLogger();
    const systemPrompt = `You are the dispatcher.\n${hotState.json}`;
    const { record, warnings, budget } = measurePrompt(
      {
        sessionId: "sess-1",
        runId: "run-1",
        hotState,
        systemPrompt,
        userPrompt: "Fix the parser",
        refFiles: 1,
      },
      { logger },
    );
    expect(record).toEqual({
      type: "prompt_metrics",
      session: "sess-1",
      run: "run-1",
      hs_tokens: hotState.tokens,
      hs_bytes: hotState.bytes,
      hs_truncated: false,
      artifacts: 3,
      artifact_types: ["code", "doc"],
      sys_chars: systemPrompt.length,
      user_chars: 14,
      est_tokens: countTokensExact(systemPrompt) + countTokensExact("Fix the parser"),
      ref_files: 1,
      budget_violations: 0,
      budget_ok: true,
    });
    expect(JSON.parse(JSON.stringify(record))).toEqual(record);
    expect(warnings).toEqual([]);
    expect(budget.ok).toBe(true);
    expect(logger.lines).toEqual([]);
  });

  it("warns above 80% of the hot-state cap, 15 index entries and 75% of the prompt cap", () => {
    const logger = captureLogger();
    const big = buildHotState(
      {
        session_id: "s",
        artifact_index: ids.slice(0, 16).map((id) => ({ artifact_id: id, type: "log" as const })),
      },
      { countTokens: () => 801 },
    );
    const { warnings, record } = measurePrompt(
      { sessionId: "s", hotState: big, systemPrompt: "x".repeat(6001), userPrompt: "" },
      { countTokens: byChars, logger },
    );
    expect(record.run).toBeNull();
    expect(warnings.map(({ kind, value, threshold }) => ({ kind, value, threshold }))).toEqual([
      { kind: "hot_state_tokens", value: 801, threshold: 800 },
      { kind: "artifact_index_entries", value: 16, threshold: 15 },
      { kind: "prompt_tokens", value: 6001, threshold: 6000 },
    ]);
    expect(logger.lines.map((line) => line.message)).toEqual(
      warnings.map((w) => expect.stringContaining(w.message)),
    );
  });

  it("derives the warning levels from the configured limits", () => {
    const { warnings } = measurePrompt(
      { sessionId: "s", hotState, systemPrompt: "x".repeat(400), userPrompt: "" },
      {
        countTokens: byChars,
        budget: { maxPromptTokens: 500 },
        logger: captureLogger(),
      },
    );
    // 75 % of the configured 500.
    expect(warnings).toEqual([
      expect.objectContaining({ kind: "prompt_tokens", value: 400, threshold: 375 }),
    ]);
    expect(promptBudget({ maxPromptTokens: 500 }).warningLevels).toEqual({
      hot_state_tokens: 800,
      artifact_index_entries: 15,
      prompt_tokens: 375,
    });
  });

  it("does not warn exactly at the levels", () => {
    const { warnings } = measurePrompt(
      { sessionId: "s", hotState, systemPrompt: "x".repeat(6000), userPrompt: "" },
      { countTokens: byChars, logger: captureLogger() },
    );
    expect(warnings).toEqual([]);
  });

  it("counts violations, including rag chunks and inline artifacts, and warns about them", () => {
    const logger = captureLogger();
    const { record, warnings, budget } = measurePrompt(
      {
        sessionId: "s",
        hotState,
        systemPrompt: "x".repeat(9000),
        userPrompt: "",
        ragChunks: 11,
        inlineArtifactChars: 2500,
      },
      { countTokens: byChars, logger },
    );
    expect(record.budget_violations).toBe(3);
    expect(record.budget_ok).toBe(false);
    expect(budget.violations.map((violation) => violation.field)).toEqual([
      "maxPromptTokens",
      "maxRagChunks",
      "maxInlineArtifactChars",
    ]);
    expect(warnings.map((warning) => warning.kind)).toEqual(["prompt_tokens", "budget_violations"]);
    expect(logger.lines).toHaveLength(5);
  });

  it("fails closed when the prompt cannot be counted: est_tokens null, budget violated", () => {
    const logger = captureLogger();
    const { record, budget } = measurePrompt(
      { sessionId: "s", hotState, systemPrompt: "a", userPrompt: "b" },
      {
        countTokens: () => {
          throw new Error("tokenizer down");
        },
        logger,
      },
    );
    expect(record.est_tokens).toBeNull();
    expect(record.budget_ok).toBe(false);
    expect(budget.violations[0]).toMatchObject({
      field: "maxPromptTokens",
      kind: "unmeasurable",
      actual: null,
    });
    expect(logger.lines.some((line) => line.message.includes("tokenizer down"))).toBe(true);
  });

  it.each([
    ["NaN", Number.NaN],
    ["a negative count", -3],
    ["a fractional count", 2.5],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["a string", "12"],
    ["null", null],
    ["a promise", Promise.resolve(1)],
  ])(
    "fails closed on ragChunks that is %s: the budget counts as violated, the others are still checked",
    (_why, measure) => {
      const logger = captureLogger();
      const { budget } = measurePrompt(
        {
          sessionId: "s",
          hotState,
          systemPrompt: "x".repeat(9000),
          userPrompt: "",
          ragChunks: measure as never,
        },
        { countTokens: byChars, logger },
      );
      expect(budget.ok).toBe(false);
      expect(budget.violations).toEqual([
        expect.objectContaining({ field: "maxPromptTokens", limit: 8000, actual: 9000, kind: "exceeded" }),
        expect.objectContaining({ field: "maxRagChunks", limit: 10, actual: null, kind: "unmeasurable" }),
      ]);
      expect(logger.lines.some((line) => line.message.includes("could not be measured"))).toBe(true);
    },
  );

  it("fails closed on a counter returning NaN", () => {
    const { record } = measurePrompt(
      { sessionId: "s", hotState, systemPrompt: "a", userPrompt: "b" },
      { countTokens: () => Number.NaN, logger: captureLogger() },
    );
    expect(record.est_tokens).toBeNull();
    expect(record.budget_ok).toBe(false);
  });

  it.each([
    ["a negative count that would cancel a positive one", [50, -10]],
    ["two fractional counts that would add up to an integer", [0.5, 0.5]],
    ["Infinity", [Number.POSITIVE_INFINITY, 0]],
    ["NaN in the user prompt's count", [1, Number.NaN]],
  ])("validates each count before adding them: %s", (_why, counts) => {
    const queue = [...counts];
    const { record, budget } = measurePrompt(
      { sessionId: "s", hotState, systemPrompt: "a", userPrompt: "b" },
      { countTokens: () => queue.shift()!, logger: captureLogger() },
    );
    expect(record).toMatchObject({ est_tokens: null, budget_ok: false });
    expect(budget.violations).toEqual([
      expect.objectContaining({ field: "maxPromptTokens", kind: "unmeasurable", actual: null }),
    ]);
  });

  it("names a NaN count as NaN, not null", () => {
    const { budget } = measurePrompt(
      { sessionId: "s", hotState, systemPrompt: "a", userPrompt: "b" },
      { countTokens: () => Number.NaN, logger: captureLogger() },
    );
    expect(budget.violations[0]!.message).toContain("returned NaN,");
  });

  it.each([
    [{ sessionId: "" }, "an empty session id"],
    [{ sessionId: "a\u0000" }, "NUL in the session id"],
    [{ runId: "r\n1" }, "a newline in the run id"],
    [{ systemPrompt: 5 }, "a non-text system prompt"],
    [{ userPrompt: undefined }, "no user prompt"],
    [{ hotState: { tokens: 1 } }, "a hot state that is not a build"],
    [{ refFiles: -3 }, "a negative refFiles"],
    [{ refFiles: Number.NaN }, "refFiles NaN"],
    [{ refFiles: 0.5 }, "a fractional refFiles"],
    [{ refFiles: "7" }, "refFiles as a string"],
    [{ refFiles: 2 ** 31 }, "refFiles past PostgreSQL's integer"],
    [{ hotState: { ...hotState, bytes: -1 } }, "negative hot-state bytes"],
    [{ hotState: { ...hotState, bytes: "182" } }, "hot-state bytes as a string"],
    [{ hotState: { ...hotState, tokens: 1.5 } }, "fractional hot-state tokens"],
    [{ hotState: { ...hotState, tokens: 3_000_000_000 } }, "hot-state tokens past PostgreSQL's integer"],
    [{ hotState: { ...hotState, truncated: "no" } }, "hot-state truncated that is not a boolean"],
    [
      { hotState: { ...hotState, state: { session_id: "s", artifact_index: "x" } } },
      "an index that is not a list",
    ],
    [{ hotState: { ...hotState, state: { session_id: "s", artifact_index: [null] } } }, "a null index entry"],
  ])("refuses %j (%s)", async (change, _why) => {
    const input = { sessionId: "s", hotState, systemPrompt: "a", userPrompt: "b", ...change };
    await expectStowageError(
      () => measurePrompt(input as never, { logger: captureLogger() }),
      "INVALID_INPUT",
    );
  });

  it("refuses a bad budget", async () => {
    for (const budget of [{ maxPromptTokens: -1 }, { maxPromptTokenz: 1 }]) {
      const options = { budget: budget as never, logger: captureLogger() };
      await expectStowageError(
        () => measurePrompt({ sessionId: "s", hotState, systemPrompt: "", userPrompt: "" }, options),
        "INVALID_INPUT",
      );
    }
  });
});
