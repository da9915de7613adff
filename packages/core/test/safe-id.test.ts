import { describe, expect, it } from "vitest";
import { assertSafeId, isSafeId, MAX_SAFE_ID_LENGTH, safeIdProblem } from "../src/safe-id.js";
import { expectStowageError } from "../src/testing/expect-stowage-error.js";

describe("safe ids", () => {
  it.each([
    "a",
    "abc-123",
    "550e8400-e29b-41d4-a716-446655440000",
    "ses_01HZX3",
    "req:2026-11-23@eu",
    "v1.2.3",
    "x".repeat(MAX_SAFE_ID_LENGTH),
  ])("accepts %j", (id) => {
    expect(safeIdProblem(id)).toBeUndefined();
    expect(isSafeId(id)).toBe(true);
  });

  it.each([
    ["", "empty"],
    ["x".repeat(MAX_SAFE_ID_LENGTH + 1), "too long"],
    ["..", "traversal"],
    ["../x", "traversal with a slash"],
    ["a/b", "a slash"],
    ["a\\b", "a backslash"],
    [".hidden", "a leading dot"],
    ["-flag", "a leading dash"],
    ["_x", "a leading underscore"],
    ["%2e%2e", "percent-encoding"],
    ["a b", "a space"],
    ["a\u0000b", "NUL"],
    ["a\nb", "a newline"],
    ["ключ", "non-ASCII letters"],
    ["a\u202eb", "a direction override"],
    [42, "a number"],
    [null, "null"],
    [["a"], "an array"],
  ])("refuses %j (%s)", async (value, _why) => {
    expect(isSafeId(value)).toBe(false);
    const err = await expectStowageError(() => assertSafeId(value, "sessionId"), "INVALID_INPUT");
    expect(err.message.startsWith("sessionId ")).toBe(true);
  });

  it("takes a caller's own length cap", () => {
    expect(isSafeId("x".repeat(200), 255)).toBe(true);
    expect(isSafeId("x".repeat(65), 64)).toBe(false);
  });
});
