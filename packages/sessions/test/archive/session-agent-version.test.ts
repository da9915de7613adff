import { realTranscripts } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { parseAgentVersion } from "../../src/agents/agent-version.js";
import { sessionAgentVersion } from "../../src/archive/session-agent-version.js";

const encoder = new TextEncoder();
const jsonl = (...lines: unknown[]) =>
  encoder.encode(
    `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`,
  );

describe("sessionAgentVersion", () => {
  it("Claude Code: the newest entry's version, only at the top level", () => {
    const transcript = jsonl(
      { type: "summary", summary: "x" },
      { type: "user", version: "2.0.76", message: { content: '{"version":"99.0.0"}' } },
      { type: "assistant", version: "2.1.4", toolUseResult: { version: "50.0.0" } },
      'not json {"version":"70.0.0"}',
      { type: "user", version: "2.1.0" },
      { type: "user", version: "99999999999.0.0" },
      { type: "user", version: `2.2.0\u0000` },
      { type: "user", version: 3 },
    );
    expect(sessionAgentVersion("claude-code", transcript)).toBe("2.1.4");
  });

  it("Claude Code: a newer version is found however the line writes it, each line read once", () => {
    const lines = [
      { type: "user", version: "2.0.0" },
      // Older nested values before the newer top-level one.
      `{"toolUseResult":{"version":"1.0.0"},"type":"user","version":"2.0.5"}`,
      // Written with spaces, or escaped: only parsing reads them.
      `{"type": "user", "version": "2.0.6"}`,
      `{"type":"user","version":"2.0.\u0037"}`,
      // Not ASCII, long, or not a string: never newer, never thrown.
      `{"type":"user","version":"2.0.8é"}`,
      `{"type":"user","version":"${"9".repeat(200)}"}`,
      `{"type":"user","version":[9,0,0]}`,
    ];
    expect(sessionAgentVersion("claude-code", jsonl(...lines))).toBe("2.0.7");
    expect(sessionAgentVersion("claude-code", jsonl(...lines.slice(0, 3)))).toBe("2.0.6");
    expect(sessionAgentVersion("claude-code", jsonl(...lines.slice(0, 2)))).toBe("2.0.5");
  });

  it("Codex: the newest session_meta's cli_version", () => {
    const rollout = jsonl(
      { type: "session_meta", payload: { id: "a", cli_version: "0.125.0" } },
      { type: "response_item", payload: { type: "message", cli_version: "9.0.0", text: "session_meta" } },
      { type: "session_meta", payload: { id: "a", cli_version: "0.169.0" } },
      { type: "session_meta", payload: "0.200.0" },
    );
    expect(sessionAgentVersion("codex", rollout)).toBe("0.169.0");
    // A rollout from before openai/codex#3214 has a bare first line without cli_version.
    expect(
      sessionAgentVersion("codex", jsonl({ id: "a", timestamp: "t", instructions: null })),
    ).toBeUndefined();
  });

  it("OpenCode: the export's info.version", () => {
    const exported = (info: unknown) => encoder.encode(JSON.stringify({ info, messages: [] }));
    expect(sessionAgentVersion("opencode", exported({ id: "ses_1", version: "1.18.33" }))).toBe("1.18.33");
    expect(sessionAgentVersion("opencode", exported({ id: "ses_1" }))).toBeUndefined();
    expect(
      sessionAgentVersion("opencode", exported({ id: "ses_1", version: "x".repeat(100_000) })),
    ).toBeUndefined();
    expect(sessionAgentVersion("opencode", encoder.encode("not json"))).toBeUndefined();
  });

  it("gives undefined for a session that records none, or bytes that are not UTF-8", () => {
    expect(sessionAgentVersion("claude-code", jsonl({ type: "user" }))).toBeUndefined();
    expect(sessionAgentVersion("claude-code", new Uint8Array([0xff, 0xfe, 0x22]))).toBeUndefined();
    expect(sessionAgentVersion("codex", new Uint8Array())).toBeUndefined();
  });

  const real = realTranscripts("session agent version");
  describe.skipIf(!real.present)("real transcripts", () => {
    it("reads the version each real Claude Code transcript and Codex rollout records", () => {
      const checked: string[] = [];
      for (const file of [...real.files("claude-code"), ...real.files("codex")]) {
        const records = real.records(file);
        const codex = file.startsWith("codex/");
        // Read here independently: the distinct versions the file's records carry.
        const versions = new Set(
          records
            .map((record) =>
              codex
                ? record.type === "session_meta"
                  ? record.payload?.cli_version
                  : undefined
                : record.version,
            )
            .filter((value) => typeof value === "string"),
        );
        const found = sessionAgentVersion(codex ? "codex" : "claude-code", encoder.encode(real.read(file)));
        if (versions.size === 0) expect(found, file).toBeUndefined();
        else {
          expect(versions.has(found as string), `${file}: ${found} of ${[...versions]}`).toBe(true);
          for (const other of versions) {
            expect(parseAgentVersion(other)).toBeDefined();
          }
          checked.push(`${file}: ${found}`);
        }
      }
      expect(checked.some((line) => line.endsWith(": 2.0.76"))).toBe(true);
      expect(checked.some((line) => line.endsWith(": 2.1.4"))).toBe(true);
      expect(checked.some((line) => line.endsWith(": 0.125.0"))).toBe(true);
      expect(checked.some((line) => line.endsWith(": 0.128.0-alpha.1"))).toBe(true);
    });
  });
});
