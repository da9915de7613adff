import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { assertSessionId, isSessionId } from "../../src/agents/session-id.js";
import { claudeSessionLocation, defaultClaudeConfigDir } from "../../src/claude/session-location.js";
import { HOSTILE_IDS } from "../../src/testing/hostile-ids.js";

const sessionId = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";

describe("claudeSessionLocation", () => {
  it("builds the transcript and companion paths under <configDir>/projects/<projectKey>", async () => {
    const location = await claudeSessionLocation({ configDir: "/cfg", cwd: "/no/such/work_dir", sessionId });
    expect(location).toEqual({
      sessionId,
      projectKey: "-no-such-work-dir",
      projectDir: join("/cfg", "projects", "-no-such-work-dir"),
      transcriptPath: join("/cfg", "projects", "-no-such-work-dir", `${sessionId}.jsonl`),
      companionDir: join("/cfg", "projects", "-no-such-work-dir", sessionId),
    });
    const byKey = await claudeSessionLocation({
      configDir: "/cfg",
      projectKey: "-no-such-work-dir",
      sessionId,
    });
    expect(byKey).toEqual(location);
  });

  it("defaults the config dir to $CLAUDE_CONFIG_DIR, then ~/.claude", () => {
    const saved = process.env.CLAUDE_CONFIG_DIR;
    try {
      process.env.CLAUDE_CONFIG_DIR = "/opt/claude-config";
      expect(defaultClaudeConfigDir()).toBe("/opt/claude-config");
      delete process.env.CLAUDE_CONFIG_DIR;
      expect(defaultClaudeConfigDir()).toMatch(/\.claude$/);
    } finally {
      if (saved === undefined) delete process.env.CLAUDE_CONFIG_DIR;
      else process.env.CLAUDE_CONFIG_DIR = saved;
    }
  });

  it("needs exactly one of cwd and projectKey, and a non-empty configDir", async () => {
    for (const options of [
      { sessionId },
      { sessionId, cwd: "/a", projectKey: "-a" },
      { sessionId, cwd: "/a", configDir: "" },
      { sessionId, projectKey: "../etc" },
    ]) {
      await expectStowageError(claudeSessionLocation(options), "INVALID_INPUT");
    }
  });

  describe("validates the session id before any path is built", () => {
    for (const { value, why } of HOSTILE_IDS) {
      it(why, async () => {
        expect(isSessionId(value)).toBe(false);
        await expectStowageError(() => assertSessionId(value), "INVALID_INPUT");
        await expectStowageError(
          claudeSessionLocation({ configDir: "/cfg", cwd: "/w", sessionId: value as string }),
          "INVALID_INPUT",
        );
      });
    }
  });
});
