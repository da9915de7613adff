import { describe, expect, it } from "vitest";
import { StowageError } from "../src/errors.js";
import { assertSha256Hex, isSha256Hex } from "../src/sha256.js";

const valid = "a".repeat(64);

describe("sha256 hex", () => {
  it("accepts exactly 64 lowercase hex characters", () => {
    expect(isSha256Hex(valid)).toBe(true);
    expect(isSha256Hex("0123456789abcdef".repeat(4))).toBe(true);
  });

  it.each([
    ["uppercase", "A".repeat(64)],
    ["63 chars", "a".repeat(63)],
    ["65 chars", "a".repeat(65)],
    ["non-hex", `${"a".repeat(63)}g`],
    ["traversal", `../${"a".repeat(61)}`],
    ["trailing newline", `${valid}\n`],
    ["with prefix", `sha256:${valid}`],
    ["not a string", 42],
  ])("rejects %s", (_why, value) => {
    expect(isSha256Hex(value)).toBe(false);
    try {
      assertSha256Hex(value, "artifact id");
      throw new Error("accepted");
    } catch (err) {
      expect(StowageError.is(err, "INVALID_INPUT")).toBe(true);
      expect((err as Error).message).toMatch(/^artifact id must be 64 lowercase hex characters, got /);
    }
  });
});
