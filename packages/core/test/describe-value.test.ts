import { describe, expect, it } from "vitest";
import { describeValue } from "../src/describe-value.js";

describe("describeValue", () => {
  it.each([
    [Number.NaN, "NaN"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    [Number.NEGATIVE_INFINITY, "-Infinity"],
    [-0.5, "-0.5"],
    [undefined, "undefined"],
    [null, "null"],
    [10n, "10n"],
    ["a\u0000b", '"a\\u0000b"'],
    [new Uint8Array(3), "Uint8Array(3 bytes)"],
    [{ a: [1, 2] }, '{"a":[1,2]}'],
  ])("shows %s as %s", (value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });

  it("cuts long values", () => {
    expect(describeValue("x".repeat(100))).toBe(`"${"x".repeat(80)}…"`);
  });
});
