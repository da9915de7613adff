import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { assertSessionAgent, SESSION_AGENTS } from "../../src/agents/session-agent.js";
import { assertSessionId, isSessionId } from "../../src/agents/session-id.js";
import { HOSTILE_IDS } from "../../src/testing/hostile-ids.js";

// The longest session id, from the rule: a safe id of at most 128 characters.
const MAX_SESSION_ID_LENGTH = 128;

describe("session ids are opaque safe ids", () => {
  it.each([
    ["a Claude Code / Codex UUID", "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10"],
    ["a Codex v7 UUID", "019e1625-789d-76c0-80ab-3724b5ddb799"],
    ["an OpenCode id", "ses_df96f1435ffed9ABkI498J7iJN"],
    ["the Agent SDK conformance suite's ids", "sess"],
    ["a short id", "s1"],
    ["a host's id", "thread:42@eu-1.v2"],
    ["the longest", `a${"b".repeat(MAX_SESSION_ID_LENGTH - 1)}`],
  ])("accepts %s", (_why, id) => {
    expect(isSessionId(id)).toBe(true);
    expect(() => assertSessionId(id)).not.toThrow();
  });

  it("refuses one character too many", async () => {
    const error = await expectStowageError(
      () => assertSessionId("a".repeat(MAX_SESSION_ID_LENGTH + 1)),
      "INVALID_INPUT",
    );
    expect(error.reason).toBe("INVALID_SESSION_ID");
  });

  for (const { value, why } of HOSTILE_IDS) {
    it(`refuses ${why}`, async () => {
      expect(isSessionId(value)).toBe(false);
      await expectStowageError(() => assertSessionId(value), "INVALID_INPUT", "INVALID_SESSION_ID");
    });
  }
});

describe("agents", () => {
  it("are claude-code, codex and opencode; anything else is UNKNOWN_AGENT", async () => {
    expect(SESSION_AGENTS).toEqual(["claude-code", "codex", "opencode"]);
    for (const agent of ["Claude-Code", "claude", "aider", "", null, "codex "]) {
      await expectStowageError(() => assertSessionAgent(agent), "INVALID_INPUT", "UNKNOWN_AGENT");
    }
  });
});
