import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { SESSION_AGENTS } from "../../src/agents/session-agent.js";
import {
  AGENT_VERSION_INCOMPATIBILITIES,
  type AgentVersionIncompatibility,
  checkAgentVersion,
} from "../../src/agents/version-compatibility.js";

describe("checkAgentVersion", () => {
  it("every agent's table has rows, each with its source", () => {
    for (const agent of SESSION_AGENTS) {
      expect(AGENT_VERSION_INCOMPATIBILITIES[agent].length).toBeGreaterThan(0);
      for (const row of AGENT_VERSION_INCOMPATIBILITIES[agent]) expect(row.source.length).toBeGreaterThan(20);
    }
  });

  it("the same version passes silently", () => {
    expect(checkAgentVersion("claude-code", "2.1.330", "2.1.330")).toEqual({
      verdict: "same",
      version: "2.1.330",
    });
    expect(checkAgentVersion("opencode", "1.18.33", "v1.18.33")).toEqual({
      verdict: "same",
      version: "1.18.33",
    });
  });

  for (const agent of SESSION_AGENTS) {
    it(`${agent}: a major version apart is refused with CONFLICT, either way`, async () => {
      for (const [captured, installed] of [
        ["1.0.128", "2.1.330"],
        ["2.1.330", "1.0.128"],
        ["0.169.0", "1.0.0-rc.1"],
      ] as const) {
        const err = await expectStowageError(
          () => checkAgentVersion(agent, captured, installed),
          "CONFLICT",
          "AGENT_VERSION_MISMATCH",
        );
        const expected = (text: string) => text.replace(/^v/, "");
        expect(err.details).toEqual({ agent, captured: expected(captured), installed: expected(installed) });
        expect(err.message).toContain(captured);
      }
    });

    it(`${agent}: a minor or patch apart, or a prerelease, is restored with a warning`, () => {
      for (const [captured, installed, older] of [
        ["0.125.0", "0.169.0", false],
        ["0.128.0-alpha.1", "0.128.0", false],
        ["2.1.330", "2.0.76", true],
        ["1.18.33", "1.18.32", true],
      ] as const) {
        const check = checkAgentVersion(agent, captured, installed);
        expect(check).toMatchObject({ verdict: "differs", captured, installed });
        if (check.verdict !== "differs") throw new Error("unreachable");
        expect(check.warning).toContain(captured);
        expect(check.warning).toContain(installed);
        expect(check.warning.includes("(older)")).toBe(older);
      }
    });
  }

  it("checks nothing when either version is unknown or not a version, hostile ones included", () => {
    const hostile = [
      undefined,
      null,
      42,
      "",
      "latest",
      "9".repeat(1_000_000),
      `2.1.0-${"x.".repeat(100_000)}x`,
      "2.1.0\u0000",
      "\u001b[2J1.0.0",
      "1.0.0\nAGENT_VERSION_MISMATCH",
    ];
    for (const value of hostile) {
      expect(checkAgentVersion("codex", value, "0.169.0")).toEqual({ verdict: "unknown" });
      expect(checkAgentVersion("codex", "0.169.0", value)).toEqual({ verdict: "unknown" });
    }
  });

  it("a row of version ranges refuses only the pairs it names", async () => {
    const table: AgentVersionIncompatibility[] = [
      {
        rule: { kind: "ranges", captured: { below: "0.40.0" }, installed: { from: "0.40.0" } },
        source: "test row",
      },
    ];
    await expectStowageError(() => checkAgentVersion("codex", "0.39.9", "0.40.0", table), "CONFLICT");
    await expectStowageError(() => checkAgentVersion("codex", "0.39.0", "0.169.0", table), "CONFLICT");
    expect(checkAgentVersion("codex", "0.40.0", "0.169.0", table).verdict).toBe("differs");
    expect(checkAgentVersion("codex", "0.39.0", "0.39.5", table).verdict).toBe("differs");
    // The other way is not named by the row.
    expect(checkAgentVersion("codex", "0.169.0", "0.39.0", table).verdict).toBe("differs");
    // Without the major rule, a major apart is only a warning.
    expect(checkAgentVersion("codex", "1.0.0", "2.0.0", table).verdict).toBe("differs");
  });
});
