import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { claudeSessionLocation } from "@stowage/sessions";

/**
 * What a Claude Code run leaves in its container: the transcript, a subagent transcript and a
 * large tool result in the companion directory, and a legacy `agent-*.jsonl` beside them.
 */
export async function writeContainerSession(options: { configDir: string; cwd: string; turns: number }) {
  const sessionId = randomUUID();
  const location = await claudeSessionLocation({ configDir: options.configDir, cwd: options.cwd, sessionId });
  const line = (record: object) => `${JSON.stringify(record)}\n`;
  const base = { sessionId, cwd: options.cwd, version: "2.1.5", isSidechain: false };
  let transcript = "";
  let parentUuid: string | null = null;
  for (let turn = 0; turn < options.turns; turn++) {
    const user = randomUUID();
    const assistant = randomUUID();
    const at = new Date(Date.UTC(2026, 10, 21, 9, 0, turn)).toISOString();
    transcript += line({
      ...base,
      type: "user",
      uuid: user,
      parentUuid,
      timestamp: at,
      message: { role: "user", content: `step ${turn}: run the tests` },
    });
    transcript += line({
      ...base,
      type: "assistant",
      uuid: assistant,
      parentUuid: user,
      timestamp: at,
      message: {
        role: "assistant",
        content: [
          { type: "text", text: `Running the suite (turn ${turn}).` },
          { type: "tool_use", id: `toolu_${turn}`, name: "Bash", input: { command: "npm test" } },
        ],
        usage: { input_tokens: 1200 + turn, output_tokens: 40 },
      },
    });
    parentUuid = assistant;
  }
  const files: Record<string, string> = {
    [`${sessionId}.jsonl`]: transcript,
    [`${sessionId}/subagents/agent-explore.jsonl`]: line({
      ...base,
      isSidechain: true,
      type: "user",
      message: { role: "user", content: "explore the parser" },
    }),
    [`${sessionId}/subagents/agent-explore.meta.json`]: JSON.stringify({ agentType: "Explore" }),
    [`${sessionId}/tool-results/toolu_0.txt`]: "PASS ".repeat(20_000),
    "agent-legacy01.jsonl": line({
      ...base,
      isSidechain: true,
      type: "assistant",
      message: { role: "assistant", content: "legacy subagent" },
    }),
  };
  for (const [path, content] of Object.entries(files)) {
    const absolute = join(location.projectDir, path);
    await mkdir(dirname(absolute), { recursive: true });
    await writeFile(absolute, content);
  }
  return { sessionId, projectDir: location.projectDir, files: Object.keys(files) };
}

/** Every file under `dir` with its bytes, by relative path. */
export async function snapshot(dir: string): Promise<Map<string, Buffer>> {
  const result = new Map<string, Buffer>();
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    result.set(relative(dir, path), await readFile(path));
  }
  return result;
}
