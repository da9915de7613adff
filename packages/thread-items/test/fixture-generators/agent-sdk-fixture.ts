import { type ExpectedSession, emptyExpected } from "./expected.js";
import type { Prng } from "./prng.js";
import { CWD } from "./project-text.js";
import type { Turn } from "./session-script.js";

const MODEL = "claude-sonnet-4-5-20250929";
/** The tools Claude Code's `system` `init` message lists. */
export const TOOLS = [
  "Task",
  "Bash",
  "Glob",
  "Grep",
  "Read",
  "Edit",
  "Write",
  "NotebookEdit",
  "WebFetch",
  "TodoWrite",
  "WebSearch",
  "BashOutput",
  "KillShell",
  "SlashCommand",
  "ExitPlanMode",
];

type Json = Record<string, unknown>;

/**
 * Renders a session script as the messages a Claude Agent SDK `query()` yields in streaming-input
 * mode (one `init`, a `result` per turn), one JSON message per line, as a recorder would save them:
 * partial `stream_event`s included.
 */
export function agentSdkStream(random: Prng, turns: Turn[]): { jsonl: string; expected: ExpectedSession } {
  const sessionId = random.uuid();
  const lines: string[] = [];
  const expected = emptyExpected(sessionId);
  const push = (message: Json) =>
    lines.push(JSON.stringify({ ...message, session_id: sessionId, uuid: random.uuid() }));
  let cacheRead = 11_200;

  push({
    type: "system",
    subtype: "init",
    cwd: CWD,
    tools: TOOLS,
    mcp_servers: [],
    model: MODEL,
    permissionMode: "acceptEdits",
    slash_commands: ["compact", "context", "cost", "init", "review", "security-review"],
    apiKeySource: "ANTHROPIC_API_KEY",
    claude_code_version: "2.0.31",
    output_style: "default",
    agents: ["general-purpose", "statusline-setup", "Explore", "Plan"],
    skills: [],
    plugins: [],
  });

  for (const [turnIndex, turn] of turns.entries()) {
    if (turn.compactedBefore) {
      push({ type: "system", subtype: "status", status: "compacting" });
      push({
        type: "system",
        subtype: "compact_boundary",
        compact_metadata: { trigger: "auto", pre_tokens: 161_877 },
      });
      push({ type: "system", subtype: "status", status: null });
      cacheRead = 11_200;
    }
    const total = {
      input_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 0,
    };
    let apiCalls = 0;
    let blocks: Json[] = [];
    const flush = (stopReason: string) => {
      const usage = {
        input_tokens: random.int(3, 12),
        cache_creation_input_tokens: random.int(150, 3200),
        cache_read_input_tokens: cacheRead,
        output_tokens: random.int(24, 900),
      };
      cacheRead += usage.cache_creation_input_tokens;
      for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += usage[key];
      apiCalls++;
      const id = random.anthropicId("msg");
      for (const block of blocks) {
        if (block.type === "text" && random.chance(0.5)) {
          const text = block.text as string;
          for (let at = 0; at < text.length; at += 40) {
            push({
              type: "stream_event",
              event: {
                type: "content_block_delta",
                index: 0,
                delta: { type: "text_delta", text: text.slice(at, at + 40) },
              },
              parent_tool_use_id: null,
            });
          }
        }
        push({
          type: "assistant",
          message: {
            model: MODEL,
            id,
            type: "message",
            role: "assistant",
            content: [block],
            stop_reason: stopReason,
            stop_sequence: null,
            usage: { ...usage, service_tier: "standard" },
            context_management: null,
          },
          parent_tool_use_id: null,
        });
      }
      blocks = [];
    };
    const maxTurnsHit = turn.interrupted;
    const steps = maxTurnsHit ? turn.steps.slice(0, Math.ceil(turn.steps.length / 2)) : turn.steps;
    for (const step of steps) {
      if (step.kind === "thinking")
        blocks.push({ type: "thinking", thinking: step.text, signature: random.chars(88) });
      else if (step.kind === "text") blocks.push({ type: "text", text: step.text });
      else {
        const id = random.anthropicId("toolu");
        blocks.push({ type: "tool_use", id, name: step.claude.name, input: step.claude.input });
        flush("tool_use");
        expected.toolCalls++;
        const content = step.image
          ? [{ type: "image", source: { type: "base64", media_type: "image/png", data: step.image } }]
          : step.output;
        if (step.image) expected.images++;
        push({
          type: "user",
          message: {
            role: "user",
            content: [
              { tool_use_id: id, type: "tool_result", content, ...(step.isError ? { is_error: true } : {}) },
            ],
          },
          parent_tool_use_id: null,
          tool_use_result: step.image
            ? { type: "image" }
            : { stdout: step.output, stderr: "", interrupted: false, isImage: false },
        });
        expected.toolResults++;
      }
    }
    if (!maxTurnsHit) {
      blocks.push({ type: "text", text: turn.answer });
      flush("end_turn");
    } else if (blocks.length > 0) flush("tool_use");
    const durationMs = random.int(4_000, 180_000);
    const usage = {
      ...total,
      server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
      service_tier: "standard",
      cache_creation: {
        ephemeral_1h_input_tokens: 0,
        ephemeral_5m_input_tokens: total.cache_creation_input_tokens,
      },
    };
    push({
      type: "result",
      subtype: maxTurnsHit ? "error_max_turns" : "success",
      is_error: maxTurnsHit,
      duration_ms: durationMs,
      duration_api_ms: Math.floor(durationMs * 0.8),
      num_turns: apiCalls,
      ...(maxTurnsHit ? {} : { result: turn.answer }),
      total_cost_usd: Number(
        (
          (total.input_tokens * 3 + total.output_tokens * 15 + total.cache_read_input_tokens * 0.3) /
          1e6
        ).toFixed(6),
      ),
      usage,
      modelUsage: {
        [MODEL]: {
          inputTokens: total.input_tokens,
          outputTokens: total.output_tokens,
          cacheReadInputTokens: total.cache_read_input_tokens,
          cacheCreationInputTokens: total.cache_creation_input_tokens,
          webSearchRequests: 0,
          costUSD: 0.1,
          contextWindow: 200000,
        },
      },
      permission_denials:
        turnIndex === 2
          ? [
              {
                tool_name: "Bash",
                tool_use_id: random.anthropicId("toolu"),
                tool_input: { command: "rm -rf dist" },
              },
            ]
          : [],
    });
    expected.turns.push({
      input_tokens: total.input_tokens + total.cache_creation_input_tokens + total.cache_read_input_tokens,
      input_tokens_cached: total.cache_read_input_tokens,
      output_tokens: total.output_tokens,
      duration_ms: durationMs,
    });
  }
  return { jsonl: `${lines.join("\n")}\n`, expected };
}
