import { StowageError } from "@stowage/core";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { codeOf, errorOf } from "../../test/codes.js";
import { CORPORA } from "../../test/corpora.js";
import { countTokensHeuristic } from "./heuristic-token-counter.js";
import { countTokensExact, DEFAULT_TOKEN_COUNTER, measureTokens } from "./token-counter.js";

const charsOver4 = (text: string) => Math.ceil(text.length / 4);

describe("exact token counter", () => {
  it("is the default and agrees with o200k_base", () => {
    expect(DEFAULT_TOKEN_COUNTER).toBe(countTokensExact);
    for (const text of Object.values(CORPORA)) expect(countTokensExact(text)).toBe(o200k(text));
    expect(countTokensExact("")).toBe(0);
  });

  it("counts special-token markers as plain text instead of throwing", () => {
    const text = "before <|endoftext|> after <|im_start|>";
    expect(() => o200k(text)).toThrow(/special token/);
    expect(countTokensExact(text)).toBeGreaterThan(5);
  });

  it("refuses a non-string with INVALID_INPUT", async () => {
    for (const value of [42, null, undefined, ["a"], { text: "a" }]) {
      expect(await codeOf(() => countTokensExact(value as unknown as string))).toBe("INVALID_INPUT");
    }
  });
});

describe("chars / 4 is not an acceptable default", () => {
  it.each([
    ["hexIds", 2],
    ["json", 1.3],
    ["cjk", 2.5],
  ] as const)("chars/4 undercounts %s by at least %sx against the exact count", (name, factor) => {
    const text = CORPORA[name];
    expect(countTokensExact(text)).toBeGreaterThanOrEqual(charsOver4(text) * factor);
  });
});

describe("heuristic token counter", () => {
  it.each(Object.keys(CORPORA) as (keyof typeof CORPORA)[])(
    "stays within 20%% of the exact count on %s",
    (name) => {
      const text = CORPORA[name];
      const exact = countTokensExact(text);
      const estimate = countTokensHeuristic(text);
      expect(Math.abs(estimate - exact) / exact).toBeLessThan(0.2);
    },
  );

  it.each(["hexIds", "json", "cjk"] as const)("is much closer than chars/4 on %s", (name) => {
    const text = CORPORA[name];
    const exact = countTokensExact(text);
    const heuristicError = Math.abs(countTokensHeuristic(text) - exact);
    const quarterError = Math.abs(charsOver4(text) - exact);
    expect(heuristicError * 3).toBeLessThan(quarterError);
  });

  it("gives 0 for empty text and a non-negative integer for anything", () => {
    expect(countTokensHeuristic("")).toBe(0);
    for (const text of ["\u0000\u0001", "🎉🎉", "\ud800", "  \n\n\t", "a", "…", "x".repeat(10_000)]) {
      const count = countTokensHeuristic(text);
      expect(Number.isSafeInteger(count) && count >= 0).toBe(true);
    }
  });
});

describe("measureTokens fails closed", () => {
  it.each([
    [
      "throws",
      () => {
        throw new Error("tokenizer crashed");
      },
    ],
    ["returns NaN", () => Number.NaN],
    ["returns a negative count", () => -1],
    ["returns a fraction", () => 1.5],
    ["returns Infinity", () => Number.POSITIVE_INFINITY],
    ["returns a string", () => "12" as unknown as number],
    ["returns a promise", () => Promise.resolve(3) as unknown as number],
  ])("a counter that %s is BUDGET_EXCEEDED / UNMEASURABLE", (_why, counter) => {
    const err = errorOf(() => measureTokens(counter, "text", "hot state"));
    expect(err.code).toBe("BUDGET_EXCEEDED");
    expect(err.reason).toBe("UNMEASURABLE");
    expect(StowageError.is(err)).toBe(true);
  });

  it("passes a good count through", () => {
    expect(measureTokens(() => 7, "text", "x")).toBe(7);
  });
});
