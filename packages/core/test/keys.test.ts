import { describe, expect, it } from "vitest";
import {
  assertSafeKey,
  assertSafeKeyPrefix,
  keyProblem,
  MAX_KEY_BYTES,
  MAX_SEGMENT_BYTES,
  pathSegmentProblem,
} from "../src/keys.js";
import { expectStowageError } from "../src/testing/expect-stowage-error.js";
import { HOSTILE_KEYS, HOSTILE_PREFIXES, UNUSUAL_SAFE_KEYS } from "../src/testing/hostile-keys.js";

describe("keys", () => {
  describe("hostile keys are rejected with INVALID_INPUT", () => {
    for (const { value, why } of HOSTILE_KEYS) {
      it(why, async () => {
        expect(keyProblem(value)).toBeDefined();
        await expectStowageError(() => assertSafeKey(value), "INVALID_INPUT");
      });
    }
  });

  it("accepts unusual but safe keys and nested paths", () => {
    const longest = Array.from({ length: 4 }, () => "x".repeat(MAX_SEGMENT_BYTES)).join("/");
    expect(longest.length).toBeLessThanOrEqual(MAX_KEY_BYTES);
    for (const key of [...UNUSUAL_SAFE_KEYS, "a/b/c.txt", longest]) {
      assertSafeKey(key);
    }
  });

  it("says what was wrong and shows the input escaped", async () => {
    expect(() => assertSafeKey("a/../b")).toThrow('key segment must not be "..", got "a/../b"');
    expect(() => assertSafeKey("a\u0000b", "blob key")).toThrow(
      'blob key segment must not contain control characters or NUL, got "a\\u0000b"',
    );
  });

  it("validates single path segments", () => {
    expect(pathSegmentProblem("session-1.jsonl")).toBeUndefined();
    expect(pathSegmentProblem("s".repeat(MAX_SEGMENT_BYTES))).toBeUndefined();
    for (const bad of ["", ".", "..", "a/b", "a\\b", "nul\u0000", "s".repeat(MAX_SEGMENT_BYTES + 1), 3]) {
      expect(pathSegmentProblem(bad)).toBeDefined();
    }
  });

  it("validates listing prefixes, allowing a partial last segment", async () => {
    for (const prefix of ["", "a", "a/", "a/b-", "a/.", ".", "a/..x"]) {
      assertSafeKeyPrefix(prefix);
    }
    for (const { value } of HOSTILE_PREFIXES)
      await expectStowageError(() => assertSafeKeyPrefix(value), "INVALID_INPUT");
  });
});
