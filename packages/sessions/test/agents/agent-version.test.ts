import { describe, expect, it } from "vitest";
import {
  agentVersionFromCliOutput,
  compareAgentVersions,
  MAX_AGENT_VERSION_LENGTH,
  newerAgentVersion,
  parseAgentVersion,
} from "../../src/agents/agent-version.js";

const version = (text: string) => {
  const parsed = parseAgentVersion(text);
  if (!parsed) throw new Error(`${text} is not a version`);
  return parsed;
};

describe("parseAgentVersion", () => {
  it("reads the versions the agents write", () => {
    expect(parseAgentVersion("2.1.330")).toMatchObject({ major: 2, minor: 1, patch: 330, prerelease: [] });
    expect(parseAgentVersion("0.128.0-alpha.1")).toMatchObject({
      major: 0,
      minor: 128,
      prerelease: ["alpha", "1"],
      text: "0.128.0-alpha.1",
    });
    expect(parseAgentVersion("v1.18.33")?.text).toBe("1.18.33");
    expect(parseAgentVersion("1.2.3+build.7")?.text).toBe("1.2.3+build.7");
  });

  it("takes anything that is not a version as unknown, never throwing", () => {
    const hostile: unknown[] = [
      undefined,
      null,
      2,
      {},
      ["2.1.0"],
      "",
      "2.1",
      "2.1.0.4",
      "latest",
      "2.1.0 ",
      " 2.1.0",
      "2.1.0\n",
      "2.1.0\u0000",
      "2.1.0-\u001b[31mred",
      "2.1.0-al pha",
      "02.1.0",
      "1234567890.0.0",
      "2.1.0-",
      "2.1.0-a..b",
      `2.1.0-${"a".repeat(100)}`,
      `2.1.0-${"a.".repeat(1_000_000)}a`,
      "9".repeat(1_000_000),
      "2.1.0\u202e",
      "２.１.０",
    ];
    for (const value of hostile) expect(parseAgentVersion(value), String(value).slice(0, 40)).toBeUndefined();
  });

  it("keeps a version of exactly the longest length, with or without its v", () => {
    const longest = `1.0.0-${"a".repeat(MAX_AGENT_VERSION_LENGTH - 6)}`;
    expect(parseAgentVersion(longest)?.text).toBe(longest);
    expect(parseAgentVersion(`v${longest}`)?.text).toBe(longest);
    expect(parseAgentVersion(`${longest}a`)).toBeUndefined();
  });
});

describe("compareAgentVersions", () => {
  it("orders by semver precedence, a prerelease before its release", () => {
    const ordered = [
      "0.9.9",
      "0.125.0",
      "0.128.0-alpha",
      "0.128.0-alpha.1",
      "0.128.0-alpha.2",
      "0.128.0-alpha.10",
      "0.128.0-beta",
      "0.128.0",
      "0.169.0",
      "2.0.76",
      "2.1.4",
      "2.1.330",
      "10.0.0",
    ].map(version);
    for (let i = 0; i < ordered.length; i++) {
      for (let j = 0; j < ordered.length; j++) {
        expect(
          compareAgentVersions(ordered[i]!, ordered[j]!),
          `${ordered[i]!.text} vs ${ordered[j]!.text}`,
        ).toBe(Math.sign(i - j));
      }
    }
    expect(compareAgentVersions(version("1.0.0+a"), version("1.0.0+b"))).toBe(0);
  });

  it("picks the newer of two, either possibly unknown", () => {
    expect(newerAgentVersion(version("2.0.76"), version("2.1.4"))?.text).toBe("2.1.4");
    expect(newerAgentVersion(undefined, version("2.1.4"))?.text).toBe("2.1.4");
    expect(newerAgentVersion(version("2.1.4"), undefined)?.text).toBe("2.1.4");
    expect(newerAgentVersion(undefined, undefined)).toBeUndefined();
  });
});

describe("agentVersionFromCliOutput", () => {
  it("reads what the three CLIs print for --version", () => {
    expect(agentVersionFromCliOutput("2.1.330 (Claude Code)\n")?.text).toBe("2.1.330");
    expect(agentVersionFromCliOutput("codex-cli 0.169.0\n")?.text).toBe("0.169.0");
    expect(agentVersionFromCliOutput("1.18.33\n")?.text).toBe("1.18.33");
  });

  it("gives unknown for output without a version, huge output, or not a string", () => {
    expect(agentVersionFromCliOutput("command not found")).toBeUndefined();
    expect(agentVersionFromCliOutput("")).toBeUndefined();
    expect(agentVersionFromCliOutput(`${"x".repeat(10_000)} 1.2.3`)).toBeUndefined();
    expect(agentVersionFromCliOutput("\u001b[1m1.2.3\u001b[0m")).toBeUndefined();
    expect(agentVersionFromCliOutput(Buffer.from("1.2.3"))).toBeUndefined();
  });
});
