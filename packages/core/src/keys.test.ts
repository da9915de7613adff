import { describe, expect, it } from "vitest";
import { StowageError } from "./errors.js";
import {
  assertSafeKey,
  assertSafeKeyPrefix,
  assertSafePathSegment,
  isSafeKey,
  joinKey,
  MAX_KEY_BYTES,
  MAX_SEGMENT_BYTES,
} from "./keys.js";
import { HOSTILE_KEYS, HOSTILE_PREFIXES, UNUSUAL_SAFE_KEYS } from "./testing/hostile-keys.js";

const codeOf = (action: () => void) => {
  try {
    action();
  } catch (err) {
    return StowageError.is(err) ? err.code : `not a StowageError: ${String(err)}`;
  }
  return "accepted";
};

describe("keys", () => {
  describe("hostile keys are rejected with INVALID_INPUT", () => {
    for (const { value, why } of HOSTILE_KEYS) {
      it(why, () => {
        expect(isSafeKey(value)).toBe(false);
        expect(codeOf(() => assertSafeKey(value))).toBe("INVALID_INPUT");
      });
    }
  });

  it("accepts unusual but safe keys and nested paths", () => {
    const longest = Array.from({ length: 4 }, () => "x".repeat(MAX_SEGMENT_BYTES)).join("/");
    expect(longest.length).toBeLessThanOrEqual(MAX_KEY_BYTES);
    for (const key of [...UNUSUAL_SAFE_KEYS, "a/b/c.txt", longest]) {
      expect(codeOf(() => assertSafeKey(key))).toBe("accepted");
    }
  });

  it("says what was wrong and shows the input escaped", () => {
    expect(() => assertSafeKey("a/../b")).toThrow('key segment must not be "..", got "a/../b"');
    expect(() => assertSafeKey("a\u0000b", "blob key")).toThrow(
      'blob key segment must not contain control characters or NUL, got "a\\u0000b"',
    );
  });

  it("validates single path segments", () => {
    expect(codeOf(() => assertSafePathSegment("session-1.jsonl"))).toBe("accepted");
    expect(codeOf(() => assertSafePathSegment("s".repeat(MAX_SEGMENT_BYTES)))).toBe("accepted");
    for (const bad of ["", ".", "..", "a/b", "a\\b", "nul\u0000", "s".repeat(MAX_SEGMENT_BYTES + 1), 3]) {
      expect(codeOf(() => assertSafePathSegment(bad))).toBe("INVALID_INPUT");
    }
  });

  it("validates listing prefixes, allowing a partial last segment", () => {
    for (const prefix of ["", "a", "a/", "a/b-", "a/.", ".", "a/..x"]) {
      expect(codeOf(() => assertSafeKeyPrefix(prefix))).toBe("accepted");
    }
    for (const { value } of HOSTILE_PREFIXES)
      expect(codeOf(() => assertSafeKeyPrefix(value))).toBe("INVALID_INPUT");
  });

  it("joins validated segments", () => {
    expect(joinKey("sessions", "abc", "artifacts")).toBe("sessions/abc/artifacts");
    expect(codeOf(() => joinKey("sessions", "..", "x"))).toBe("INVALID_INPUT");
    expect(codeOf(() => joinKey("a/b"))).toBe("INVALID_INPUT");
  });
});
