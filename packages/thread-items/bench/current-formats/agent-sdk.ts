import { TOOLS } from "../../test/fixture-generators/agent-sdk-fixture.js";
import { Prng } from "../../test/fixture-generators/prng.js";
import { CWD } from "../../test/fixture-generators/project-text.js";
import {
  type AnthropicCall,
  anthropicCalls,
  assistantMessage,
  BASE62,
  benchSession,
  MODEL,
} from "./shared.js";

type Json = Record<string, unknown>;

/**
 * The messages of Agent SDK 0.3 queries (`SDKMessage`), one JSON line each, for `turnCount`
 * queries: a `system` `init` per query, one assistant message per content block (usage repeated),
 * user tool results with `tool_use_result`, a subagent's messages under its Task call
 * (`parent_tool_use_id`), `rate_limit_event`s, and a `result` with usage and model usage.
 */
export function agentSdkMessages(turnCount: number): string {
  const random = new Prng(330);
  const turns = benchSession(random, turnCount);
  const sessionId = random.uuid();
  const lines: string[] = [];
  const push = (message: Json) =>
    lines.push(JSON.stringify({ ...message, uuid: random.uuid(), session_id: sessionId }));
  const nextCall = anthropicCalls(random, "msg_01");
  let call: AnthropicCall = nextCall();
  const assistant = (block: Json, parent: string | null = null) =>
    push({
      type: "assistant",
      message: { ...assistantMessage(call, block), context_management: null },
      parent_tool_use_id: parent,
    });

  for (const turn of turns) {
    push({
      type: "system",
      subtype: "init",
      cwd: CWD,
      tools: TOOLS,
      mcp_servers: [{ name: "github", status: "connected" }],
      model: MODEL,
      permissionMode: "default",
      slash_commands: ["compact", "context", "cost", "init", "review", "security-review"],
      apiKeySource: "ANTHROPIC_API_KEY",
      claude_code_version: "2.1.7",
      output_style: "default",
      agents: ["general-purpose", "Explore", "Plan"],
      skills: [],
      plugins: [],
    });
    call = nextCall();
    for (const step of turn.steps) {
      if (step.kind === "thinking") {
        assistant({ type: "thinking", thinking: step.text, signature: random.chars(560, BASE62) });
        continue;
      }
      if (step.kind === "text") {
        assistant({ type: "text", text: step.text });
        continue;
      }
      const id = `toolu_01${random.chars(22, BASE62)}`;
      assistant({ type: "tool_use", id, name: step.claude.name, input: step.claude.input });
      if (step.claude.name === "Task") {
        // The subagent's own messages stream under its Task call.
        push({
          type: "user",
          message: { role: "user", content: [{ type: "text", text: step.claude.input.prompt }] },
          parent_tool_use_id: id,
        });
        call = nextCall();
        const grep = `toolu_01${random.chars(22, BASE62)}`;
        assistant(
          {
            type: "tool_use",
            id: grep,
            name: "Grep",
            input: { pattern: "parseToken\\(", output_mode: "content" },
          },
          id,
        );
        push({
          type: "user",
          message: {
            role: "user",
            content: [
              {
                tool_use_id: grep,
                type: "tool_result",
                content: "src/parser.ts:31:export function parseToken(",
              },
            ],
          },
          parent_tool_use_id: id,
          tool_use_result: {
            mode: "content",
            numFiles: 1,
            filenames: [],
            content: "src/parser.ts:31:export function parseToken(",
            numLines: 1,
          },
        });
      }
      push({
        type: "user",
        message: {
          role: "user",
          content: [
            {
              tool_use_id: id,
              type: "tool_result",
              content: step.output,
              ...(step.isError ? { is_error: true } : {}),
            },
          ],
        },
        parent_tool_use_id: null,
        tool_use_result: step.isError
          ? `Error: ${step.output}`
          : { stdout: step.output, stderr: "", interrupted: false, isImage: false },
      });
      call = nextCall();
    }
    assistant({ type: "text", text: turn.answer });
    push({
      type: "rate_limit_event",
      rate_limit_info: { status: "allowed", resetsAt: 1778500000, rateLimitType: "five_hour" },
    });
    push({
      type: "result",
      subtype: "success",
      is_error: false,
      duration_ms: random.int(8_000, 600_000),
      duration_api_ms: random.int(6_000, 500_000),
      num_turns: turn.steps.length + 1,
      result: turn.answer,
      stop_reason: "end_turn",
      total_cost_usd: random.int(1, 90) / 100,
      usage: {
        input_tokens: 120,
        cache_creation_input_tokens: 24_000,
        cache_read_input_tokens: 300_000,
        output_tokens: 4_000,
        server_tool_use: { web_search_requests: 0 },
        service_tier: "standard",
      },
      modelUsage: {
        [MODEL]: {
          inputTokens: 120,
          outputTokens: 4_000,
          cacheReadInputTokens: 300_000,
          cacheCreationInputTokens: 24_000,
          webSearchRequests: 0,
          costUSD: 0.42,
          contextWindow: 200_000,
        },
      },
      permission_denials: [],
    });
  }
  return lines.join("\n");
}
