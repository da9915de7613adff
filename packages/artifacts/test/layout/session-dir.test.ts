import { join, resolve } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { artifactsDirFor } from "../../src/layout/session-dir.js";

describe("artifactsDirFor", () => {
  it("is the session file path without .jsonl, made absolute", () => {
    expect(artifactsDirFor("/data/sessions/2026-01-01T10-00-00-000Z_abc.jsonl")).toBe(
      "/data/sessions/2026-01-01T10-00-00-000Z_abc",
    );
    expect(artifactsDirFor("rel/1700000000_id-with_underscores.jsonl")).toBe(
      join(resolve("rel"), "1700000000_id-with_underscores"),
    );
  });

  it.each([
    ["", "empty"],
    ["/data/sessions/abc.json", "wrong extension"],
    ["/data/sessions/2026_abc.JSONL", "extension in capitals"],
    ["/data/sessions/.jsonl", "no name"],
    ["/data/sessions/abc.jsonl", "no <timestamp>_ part"],
    ["/data/sessions/_abc.jsonl", "empty timestamp"],
    ["/data/sessions/2026_.jsonl", "empty session id"],
    ["/data/sessions/2026_abc.jsonl/", "trailing slash"],
    ["/data/sessions/2026_a\u0000b.jsonl", "NUL"],
    ["/data/sessions/2026_a\nb.jsonl", "newline"],
    ["/data/sessions/2026_a\\b.jsonl", "backslash in the name"],
    ["/data/sessions/2026_a b.jsonl", "space in the session id"],
    [
      "/data/sessions/2026_x.jsonl.jsonl",
      "session id ending in .jsonl (its directory would be another session's file)",
    ],
    ["/data/sessions/.hidden_x.jsonl", "hidden timestamp"],
    [`/data/sessions/2026_${"x".repeat(300)}.jsonl`, "name over 255 bytes"],
    [42, "a number"],
    [null, "null"],
  ])("rejects %j (%s)", async (value, _why) => {
    await expectStowageError(() => artifactsDirFor(value as string), "INVALID_INPUT", "INVALID_SESSION_FILE");
  });
});
