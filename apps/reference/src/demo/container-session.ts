import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { claudeSessionLocation } from "@stowage/sessions";

/**
 * What a Claude Code run leaves in its container: the transcript, a subagent transcript and a
 * large tool result in the companion directory, and a legacy `agent-*.jsonl` beside them.
 */
export async function writeContainerSession(options: {
  configDir: string;
  cwd: string;
  turns: number;
  /** The agent's session id (Claude Code's own); default a fresh UUID. */
  sessionId?: string;
}) {
  const sessionId = options.sessionId ?? randomUUID();
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

/**
 * What a Codex CLI run leaves in its container: one rollout,
 * `<codexHome>/sessions/YYYY/MM/DD/rollout-<YYYY-MM-DDThh-mm-ss>-<sessionId>.jsonl`, in Codex 0.125's
 * line format (`{ timestamp, type, payload }`: the session's meta, the turn's context, the
 * prompt as a response item and as an event, the answer, the turn's token count).
 */
export async function writeCodexRollout(options: { codexHome: string; startedAt: Date; sessionId?: string }) {
  const sessionId = options.sessionId ?? randomUUID();
  const start = options.startedAt;
  const day = start.toISOString().slice(0, 10);
  const time = start.toISOString().slice(11, 19).replaceAll(":", "-");
  const relativePath = `${day.replaceAll("-", "/")}/rollout-${day}T${time}-${sessionId}.jsonl`;
  let tick = 0;
  const line = (type: string, payload: object) =>
    `${JSON.stringify({ timestamp: new Date(start.getTime() + 1000 * tick++).toISOString(), type, payload })}\n`;
  const prompt = "Review the parser fix for trailing commas and say whether it is safe.";
  const answer = "The fix is safe: parseArguments() accepts one trailing comma and still rejects two.";
  const rollout =
    line("session_meta", {
      id: sessionId,
      timestamp: start.toISOString(),
      cwd: "/workspace",
      originator: "codex_cli_rs",
      cli_version: "0.125.0",
      source: "exec",
      model_provider: "openai",
    }) +
    line("turn_context", { cwd: "/workspace", approval_policy: "never", model: "gpt-5-codex" }) +
    line("response_item", {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: prompt }],
    }) +
    line("event_msg", { type: "user_message", message: prompt, images: [] }) +
    line("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: answer }],
    }) +
    line("event_msg", { type: "agent_message", message: answer }) +
    line("event_msg", {
      type: "token_count",
      info: {
        total_token_usage: {
          input_tokens: 5120,
          cached_input_tokens: 4096,
          output_tokens: 212,
          total_tokens: 5332,
        },
      },
    });
  const path = join(options.codexHome, "sessions", relativePath);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, rollout);
  return { sessionId, relativePath };
}
