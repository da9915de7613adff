import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import {
  collectSessionFiles,
  LEGACY_OWNER_PROBE_BYTES,
  legacyAgentOwner,
  transcriptOwner,
} from "../../src/archive/collect-files.js";
import { claudeSessionLocation } from "../../src/claude/session-location.js";

const utf8 = (text: string) => new TextEncoder().encode(text);
const victim = "victim-session";
const attacker = "attacker-session";

// Written by hand: what Claude Code's first line of a legacy agent file may look like, and lines
// built to make the owner check pick a session id that is not the line's own.
const FIRST_LINES: [what: string, head: string, owner: string | undefined][] = [
  ["top-level sessionId", `{"type":"user","sessionId":"${victim}"}\n{}\n`, victim],
  [
    "top-level sessionId after a nested one",
    `{"toolUseResult":{"sessionId":"${attacker}"},"sessionId":"${victim}"}\n`,
    victim,
  ],
  ["nested sessionId only", `{"toolUseResult":{"sessionId":"${attacker}"}}\n`, undefined],
  [
    "the second line's sessionId does not count",
    `{"type":"summary"}\n{"sessionId":"${attacker}"}\n`,
    undefined,
  ],
  ["no sessionId", `{"type":"user","message":"hi"}\n`, undefined],
  ["not JSON", `"sessionId":"${victim}"\n`, undefined],
  ["a JSON array", `[{"sessionId":"${victim}"}]\n`, undefined],
  ["a sessionId that is not a session id", `{"sessionId":"../${victim}"}\n`, undefined],
  ["a sessionId that is not a string", `{"sessionId":42}\n`, undefined],
  ["BOM", `\uFEFF{"sessionId":"${victim}"}\n`, victim],
  ["CRLF", `{"sessionId":"${victim}"}\r\n{}\r\n`, victim],
  ["the whole file, one line without newline", `{"sessionId":"${victim}"}`, victim],
  [
    "first line longer than the probe",
    `{"sessionId":"${victim}","pad":"${"x".repeat(LEGACY_OWNER_PROBE_BYTES)}"}\n`,
    undefined,
  ],
  [
    "first line cut at the probe, looking whole",
    `{"sessionId":"${victim}"}${" ".repeat(LEGACY_OWNER_PROBE_BYTES)}x\n`,
    undefined,
  ],
];

describe("legacyAgentOwner", () => {
  it.each(FIRST_LINES)("%s", (_what, head, owner) => {
    expect(legacyAgentOwner(utf8(head))).toBe(owner);
  });
});

describe("a legacy agent file on disk", () => {
  const sessionId = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
  const nestedFirst = `{"toolUseResult":{"sessionId":"${sessionId}"},"sessionId":"other-session"}\n`;

  it("belongs to its first line's top-level session, not one a nested object names first", async () => {
    const { projectDir } = await legacySession(sessionId, nestedFirst);
    expect(await transcriptOwner(projectDir, "agent-x1.jsonl")).toBe("other-session");
  });

  it("is left out of the capture of the session a nested object names", async () => {
    const location = await legacySession(sessionId, nestedFirst);
    const { files } = await collectSessionFiles(location, { includeLegacyAgents: true });
    expect(files.map((file) => file.path)).toEqual([`${sessionId}.jsonl`]);
  });
});

async function legacySession(sessionId: string, legacy: string) {
  const root = await tempDirectory("stowage-legacy-owner-");
  const location = await claudeSessionLocation({ configDir: join(root, "cfg"), cwd: root, sessionId });
  await mkdir(location.projectDir, { recursive: true });
  await writeFile(location.transcriptPath, `${JSON.stringify({ type: "user", sessionId })}\n`);
  await writeFile(join(location.projectDir, "agent-x1.jsonl"), legacy);
  return location;
}
