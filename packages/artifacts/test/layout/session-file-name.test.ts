import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import {
  formatSessionFileName,
  parseSessionFileName,
  sessionTimestamp,
} from "../../src/layout/session-file-name.js";

describe("session file names", () => {
  it.each([
    ["2026-01-01T10-00-00-000Z_abc.jsonl", "2026-01-01T10-00-00-000Z", "abc"],
    ["1700000000_id-with_underscores.jsonl", "1700000000", "id-with_underscores"],
    ["2026_a_b.jsonl", "2026", "a_b"],
    ["2026_0b6f4e0a-9f0c-4d35-8a1e-2f4f1c1b7a11.jsonl", "2026", "0b6f4e0a-9f0c-4d35-8a1e-2f4f1c1b7a11"],
    ["2026_user@host:1.jsonl", "2026", "user@host:1"],
    ["2026-01-01T10:00:00.000Z_abc.jsonl", "2026-01-01T10:00:00.000Z", "abc"],
  ])("parses %j (split at the first _)", (name, startedAt, sessionId) => {
    expect(parseSessionFileName(name)).toEqual({ startedAt, sessionId });
    expect(formatSessionFileName({ startedAt, sessionId })).toBe(name);
  });

  it.each([
    ["abc.jsonl", "no <timestamp>_ part"],
    ["_abc.jsonl", "empty timestamp"],
    ["2026_.jsonl", "empty session id"],
    [".hidden_abc.jsonl", "timestamp starting with a dot"],
    ["2026_abc.json", "wrong extension"],
    ["2026_abc.JSONL", "extension in capitals"],
    ["2026_abc.jsonl.partial", "a temporary file"],
    ["2026_x.jsonl.jsonl", "an id ending in .jsonl"],
    ["2026_x.JSONL.jsonl", "an id ending in .JSONL"],
    ["2026_a b.jsonl", "space"],
    ["2026_a\u0000b.jsonl", "NUL"],
    ["2026_..jsonl", "id '.'"],
    ["2026_-x.jsonl", "id starting with a dash"],
    ["2026_ünï.jsonl", "non-ASCII id"],
    [`2026_${"x".repeat(129)}.jsonl`, "id over 128 characters"],
    [`${"1".repeat(129)}_x.jsonl`, "timestamp over 128 characters"],
    ["2026_a/b.jsonl", "slash"],
    [".jsonl", "no name"],
  ])("ignores %j (%s)", (name) => {
    expect(parseSessionFileName(name)).toBeUndefined();
  });

  it("stamps a start time so that names sort by time", () => {
    expect(sessionTimestamp(new Date("2026-01-02T03:04:05.678Z"))).toBe("2026-01-02T03-04-05-678Z");
  });

  it.each([new Date(Number.NaN), "2026-01-01", 1700000000000, null])(
    "refuses the start time %j",
    async (value) => {
      await expectStowageError(() => sessionTimestamp(value as never), "INVALID_INPUT");
    },
  );
});
