import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { BUDGET_FIELDS, DEFAULT_CONTEXT_BUDGET, resolveBudget } from "../../src/budget/context-budget.js";

describe("resolveBudget", () => {
  it("has the documented defaults", () => {
    expect(resolveBudget()).toEqual({
      maxHotStateTokens: 1000,
      maxArtifactIndexEntries: 20,
      maxPromptTokens: 8000,
      maxRagChunks: 10,
      maxInlineArtifactChars: 2000,
    });
    expect(BUDGET_FIELDS).toEqual(Object.keys(DEFAULT_CONTEXT_BUDGET));
  });

  it("applies overrides, including zero, and leaves the rest at their defaults", () => {
    const budget = resolveBudget({ maxHotStateTokens: 500, maxRagChunks: 0 });
    expect(budget.maxHotStateTokens).toBe(500);
    expect(budget.maxRagChunks).toBe(0);
    expect(budget.maxPromptTokens).toBe(8000);
    expect(Object.isFrozen(budget)).toBe(true);
  });

  it.each([
    [{ maxHotStateTokens: -1 }, "negative"],
    [{ maxHotStateTokens: 1.5 }, "fractional"],
    [{ maxHotStateTokens: Number.NaN }, "NaN"],
    [{ maxHotStateTokens: Number.POSITIVE_INFINITY }, "infinite"],
    [{ maxHotStateTokens: "1000" }, "a string"],
    [{ maxHotStateToken: 1000 }, "a misspelled field (which would turn the limit off)"],
    [null, "null"],
    [[1000], "an array"],
  ])("refuses %j (%s) with INVALID_INPUT", async (overrides, _why) => {
    await expectStowageError(() => resolveBudget(overrides as never), "INVALID_INPUT");
  });
});
