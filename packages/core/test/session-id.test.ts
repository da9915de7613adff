import { describe, expect, it } from "vitest";
import { assertSessionId, isSessionId, sessionIdProblem } from "../src/session-id.js";
import { expectStowageError } from "../src/testing/expect-stowage-error.js";

// The one session-id rule, shared by sessions, artifacts and the apps (an id one of them accepts
// the others accept).
describe("session ids", () => {
  it.each(["abc", "a_b", "0b6f4e0a-9f0c-4d35-8a1e-2f4f1c1b7a11", "user@host:1", "x.json", "x".repeat(128)])(
    "accepts %j",
    (id) => {
      expect(sessionIdProblem(id)).toBeUndefined();
      expect(isSessionId(id)).toBe(true);
    },
  );

  it.each([
    "",
    "..",
    "../x",
    "a/b",
    "a\u0000b",
    "a b",
    "_a",
    ".hidden",
    "%2e%2e",
    "x.jsonl",
    "x.JSONL",
    "x".repeat(129),
    42,
    null,
  ])("refuses %j with INVALID_INPUT (INVALID_SESSION_ID)", async (id) => {
    await expectStowageError(() => assertSessionId(id), "INVALID_INPUT", "INVALID_SESSION_ID");
  });
});
