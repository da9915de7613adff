import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { checkBudget } from "../../src/budget/check-budget.js";
import { captureLogger } from "../capture-logger.js";

describe("checkBudget", () => {
  it("passes usage within every limit, logging nothing", () => {
    const logger = captureLogger();
    const result = checkBudget(
      {
        hotStateTokens: 1000,
        artifactIndexEntries: 20,
        promptTokens: () => 7999,
        ragChunks: 10,
        inlineArtifactChars: 0,
      },
      { logger },
    );
    expect(result).toEqual({ ok: true, violations: [] });
    expect(logger.lines).toEqual([]);
  });

  it("returns and logs every violation, not only the first", () => {
    const logger = captureLogger();
    const result = checkBudget(
      {
        hotStateTokens: 1001,
        artifactIndexEntries: 21,
        promptTokens: 9000,
        ragChunks: 11,
        inlineArtifactChars: 2001,
      },
      { logger },
    );
    expect(result.ok).toBe(false);
    expect(
      result.violations.map(({ field, limit, actual, kind }) => ({ field, limit, actual, kind })),
    ).toEqual([
      { field: "maxHotStateTokens", limit: 1000, actual: 1001, kind: "exceeded" },
      { field: "maxArtifactIndexEntries", limit: 20, actual: 21, kind: "exceeded" },
      { field: "maxPromptTokens", limit: 8000, actual: 9000, kind: "exceeded" },
      { field: "maxRagChunks", limit: 10, actual: 11, kind: "exceeded" },
      { field: "maxInlineArtifactChars", limit: 2000, actual: 2001, kind: "exceeded" },
    ]);
    expect(logger.lines).toHaveLength(5);
    expect(logger.lines[2]!.details).toEqual({
      field: "maxPromptTokens",
      limit: 8000,
      actual: 9000,
      kind: "exceeded",
    });
    for (const violation of result.violations) expect(violation.message).toContain(String(violation.limit));
  });

  it("uses the configured limits", () => {
    const result = checkBudget(
      { hotStateTokens: 600 },
      { budget: { maxHotStateTokens: 500 }, fields: ["maxHotStateTokens"], logger: captureLogger() },
    );
    expect(result.violations[0]).toMatchObject({ field: "maxHotStateTokens", limit: 500, actual: 600 });
  });

  it.each([
    [
      "a counter that throws",
      () => {
        throw new Error("tokenizer unavailable");
      },
    ],
    ["NaN", Number.NaN],
    ["a counter returning NaN", () => Number.NaN],
    ["a negative count", -3],
    ["a fractional count", 2.5],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["a string", "12"],
    ["null", null],
    ["a promise", () => Promise.resolve(1)],
  ])("fails closed on %s: the budget counts as violated", (_why, measure) => {
    const logger = captureLogger();
    const result = checkBudget({ promptTokens: measure as never }, { logger, fields: ["maxPromptTokens"] });
    expect(result.ok).toBe(false);
    expect(result.violations).toEqual([
      expect.objectContaining({ field: "maxPromptTokens", limit: 8000, actual: null, kind: "unmeasurable" }),
    ]);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]!.message).toContain("could not be measured");
  });

  it("keeps checking the other fields when one measure throws", () => {
    const result = checkBudget(
      {
        hotStateTokens: () => {
          throw new Error("boom");
        },
        ragChunks: 99,
      },
      { logger: captureLogger(), fields: ["maxHotStateTokens", "maxRagChunks"] },
    );
    expect(result.violations.map((violation) => violation.field)).toEqual([
      "maxHotStateTokens",
      "maxRagChunks",
    ]);
    expect(result.violations[0]!.message).toContain("boom");
  });

  it("counts a missing measure as a violation: checkBudget({}) is not ok", () => {
    const logger = captureLogger();
    const empty = checkBudget({}, { logger });
    expect(empty.ok).toBe(false);
    expect(empty.violations.map(({ field, kind, actual }) => ({ field, kind, actual }))).toEqual([
      { field: "maxHotStateTokens", kind: "missing", actual: null },
      { field: "maxArtifactIndexEntries", kind: "missing", actual: null },
      { field: "maxPromptTokens", kind: "missing", actual: null },
      { field: "maxRagChunks", kind: "missing", actual: null },
      { field: "maxInlineArtifactChars", kind: "missing", actual: null },
    ]);
    expect(logger.lines).toHaveLength(5);
    const undefinedPrompt = checkBudget({ promptTokens: undefined }, { fields: ["maxPromptTokens"], logger });
    expect(undefinedPrompt.violations).toEqual([
      expect.objectContaining({ field: "maxPromptTokens", kind: "missing" }),
    ]);
  });

  it("checks only the fields it is told to cover, and nothing when told none", () => {
    expect(checkBudget({ promptTokens: 10 }, { fields: ["maxPromptTokens"] })).toEqual({
      ok: true,
      violations: [],
    });
    expect(checkBudget({}, { fields: [] })).toEqual({ ok: true, violations: [] });
  });

  it("names NaN and Infinity in its message instead of null", () => {
    for (const [measure, shown] of [
      [Number.NaN, "NaN"],
      [Number.NEGATIVE_INFINITY, "-Infinity"],
    ] as const) {
      const [violation] = checkBudget(
        { promptTokens: measure },
        { fields: ["maxPromptTokens"], logger: captureLogger() },
      ).violations;
      expect(violation!.message).toContain(`returned ${shown},`);
      expect(violation!.message).not.toContain("null");
    }
  });

  it("refuses unknown usage fields and non-objects instead of ignoring them", async () => {
    await expectStowageError(() => checkBudget({ promptTokenz: 1 } as never), "INVALID_INPUT");
    await expectStowageError(() => checkBudget(null as never), "INVALID_INPUT");
    await expectStowageError(() => checkBudget({}, { budget: { maxPromptTokens: -1 } }), "INVALID_INPUT");
    await expectStowageError(
      () => checkBudget({}, { fields: ["maxPromptTokenz"] as never }),
      "INVALID_INPUT",
    );
    await expectStowageError(() => checkBudget({}, { fields: "maxPromptTokens" as never }), "INVALID_INPUT");
  });
});
