import { Prng } from "../../test/fixture-generators/prng.js";
import { CWD } from "../../test/fixture-generators/project-text.js";
import type { ToolStep } from "../../test/fixture-generators/session-script.js";
import { BASE62, BASE64, benchSession } from "./shared.js";

type Json = Record<string, unknown>;

/** pi's own tools (read, bash, edit, write) for a step of the script. */
function piCall(step: ToolStep): { name: string; arguments: Json } {
  const input = step.claude.input;
  switch (step.claude.name) {
    case "Read":
      return { name: "read", arguments: { path: input.file_path } };
    case "Edit":
      return {
        name: "edit",
        arguments: { path: input.file_path, oldText: input.old_string, newText: input.new_string },
      };
    case "Write":
      return { name: "write", arguments: { path: input.file_path, content: input.content } };
    default:
      return {
        name: "bash",
        arguments: { command: (input.command as string | undefined) ?? `# ${step.claude.name}` },
      };
  }
}

/**
 * A pi coding-agent session (version 3) of `turnCount` turns, with the entries and fields real
 * pi sessions hold: the session header, model and thinking-level changes, entries with `id` and
 * `parentId`, assistant messages holding thinking, text and tool calls with usage and cost,
 * tool results with details.
 */
export function piSessionFile(turnCount: number): string {
  const random = new Prng(3);
  const turns = benchSession(random, turnCount);
  const lines: string[] = [];
  let clock = Date.parse("2025-12-08T22:41:05.306Z");
  let parentId: string | null = null;
  const tick = () => {
    clock += random.int(30, 4000);
    return clock;
  };
  const entry = (type: string, fields: Json) => {
    const id = random.chars(8);
    lines.push(JSON.stringify({ type, id, parentId, timestamp: new Date(tick()).toISOString(), ...fields }));
    parentId = id;
  };
  const usage = () => {
    const input = random.int(1, 3000);
    const output = random.int(40, 900);
    const cacheRead = random.int(10_000, 90_000);
    const cacheWrite = random.int(0, 4000);
    return {
      input,
      output,
      cacheRead,
      cacheWrite,
      totalTokens: input + output + cacheRead + cacheWrite,
      cost: {
        input: input * 5e-6,
        output: output * 25e-6,
        cacheRead: cacheRead * 5e-7,
        cacheWrite: cacheWrite * 6.25e-6,
        total: 0.01,
      },
    };
  };
  const assistant = (content: Json[], stopReason: string) =>
    entry("message", {
      message: {
        role: "assistant",
        content,
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-opus-4-5",
        usage: usage(),
        stopReason,
        timestamp: clock,
      },
    });

  lines.push(
    JSON.stringify({
      type: "session",
      version: 3,
      id: random.uuid(),
      timestamp: new Date(clock).toISOString(),
      cwd: CWD,
    }),
  );
  entry("model_change", { provider: "anthropic", modelId: "claude-opus-4-5" });
  entry("thinking_level_change", { thinkingLevel: "medium" });
  for (const turn of turns) {
    entry("message", {
      message: { role: "user", content: [{ type: "text", text: turn.prompt }], timestamp: clock },
    });
    let blocks: Json[] = [];
    for (const step of turn.steps) {
      if (step.kind === "thinking") {
        blocks.push({ type: "thinking", thinking: step.text, thinkingSignature: random.chars(480, BASE64) });
        continue;
      }
      if (step.kind === "text") {
        blocks.push({ type: "text", text: step.text });
        continue;
      }
      const id = `toolu_01${random.chars(22, BASE62)}`;
      const call = piCall(step);
      assistant([...blocks, { type: "toolCall", id, ...call }], "toolUse");
      blocks = [];
      entry("message", {
        message: {
          role: "toolResult",
          toolCallId: id,
          toolName: call.name,
          content: [{ type: "text", text: step.output }],
          details:
            call.name === "bash"
              ? { truncation: null }
              : { diff: call.name === "edit" ? "-1 +1" : undefined },
          isError: step.isError,
          timestamp: clock,
        },
      });
    }
    assistant([...blocks, { type: "text", text: turn.answer }], "stop");
  }
  return lines.join("\n");
}
