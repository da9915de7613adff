import { describe, expect, it } from "vitest";
import { isThreadItem } from "../schema/parse-thread-item.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { convertCodexRollout } from "./codex-rollout.js";

const SESSION = "0199a213-81c0-7800-8aa1-bbab2a035a53";
let clock = Date.parse("2025-11-04T14:00:00.000Z");
const line = (type: string, payload: unknown, seconds = 1) => {
  clock += seconds * 1000;
  return JSON.stringify({ timestamp: new Date(clock).toISOString(), type, payload });
};
const usage = (input: number, cached: number, output: number) => ({
  type: "token_count",
  info: {
    total_token_usage: {
      input_tokens: input,
      cached_input_tokens: cached,
      output_tokens: output,
      reasoning_output_tokens: 0,
      total_tokens: input + output,
    },
    last_token_usage: {},
    model_context_window: 272000,
  },
});
const types = (items: ThreadItem[]) =>
  items.map((item) => (item.metadata as { status?: string })?.status ?? item.metadata?.type ?? "post");
const briefs = (items: ThreadItem[]) => items.map((item) => item.content[0]!.text);

describe("convertCodexRollout", () => {
  it("converts a turn, with per-turn tokens from the cumulative totals and the task's duration", () => {
    clock = Date.parse("2025-11-04T14:00:00.000Z");
    const jsonl = [
      line("session_meta", { id: SESSION, cwd: "/repo", cli_version: "0.46.0", originator: "codex_cli_rs" }),
      line("response_item", {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>" },
        ],
      }),
      line("event_msg", usage(5000, 4000, 100)),
      line("turn_context", { cwd: "/repo", model: "gpt-5-codex" }),
      line("event_msg", { type: "task_started", model_context_window: 272000 }),
      line("response_item", {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "run the tests" }],
      }),
      line("event_msg", { type: "user_message", message: "run the tests", kind: "plain" }),
      line("response_item", {
        type: "reasoning",
        summary: [{ type: "summary_text", text: "**Running tests**" }],
        encrypted_content: "gAAA",
      }),
      line("response_item", {
        type: "function_call",
        name: "shell",
        arguments: '{"command":["bash","-lc","npm test"],"workdir":"/repo"}',
        call_id: "call_1",
      }),
      line("event_msg", usage(9000, 7000, 300)),
      line("response_item", {
        type: "function_call_output",
        call_id: "call_1",
        output: '{"output":"1 failed\\n","metadata":{"exit_code":1,"duration_seconds":1.2}}',
      }),
      line("response_item", {
        type: "custom_tool_call",
        status: "completed",
        call_id: "call_2",
        name: "apply_patch",
        input: "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** End Patch",
      }),
      line("response_item", {
        type: "custom_tool_call_output",
        call_id: "call_2",
        output:
          '{"output":"Success. Updated the following files:\\nM src/a.ts\\n","metadata":{"exit_code":0}}',
      }),
      line("response_item", {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "Fixed." }],
      }),
      line("event_msg", { type: "agent_message", message: "Fixed." }),
      line("event_msg", usage(15000, 12000, 450)),
      line("event_msg", { type: "task_complete", last_agent_message: "Fixed." }),
    ].join("\n");
    const { items, problems, sessionId } = convertCodexRollout(jsonl);
    expect(problems).toEqual([]);
    expect(sessionId).toBe(SESSION);
    expect(types(items)).toEqual([
      "session_started",
      "post",
      "thinking",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
      "text",
      "turn_end",
    ]);
    expect(briefs(items).slice(1, 7)).toEqual([
      "run the tests",
      "[thinking] **Running tests**",
      "shell → npm test",
      "→ 1 failed (1 line)",
      "apply_patch → src/a.ts",
      "→ Success. Updated the following files: (2 lines)",
    ]);
    expect(items[4]!.metadata).toEqual({
      type: "tool_result",
      tool: { invocation_id: "call_1", is_error: true, output: "1 failed\n" },
    });
    expect(items[3]!.metadata).toMatchObject({
      tool: { input: { command: ["bash", "-lc", "npm test"], workdir: "/repo" } },
    });
    // Tokens since the task started: 15000 − 5000 in (12000 − 4000 cached), 450 − 100 out; 12 seconds.
    expect(items.at(-1)!.metadata).toEqual({
      type: "turn_end",
      stats: { input_tokens: 10000, input_tokens_cached: 8000, output_tokens: 350, duration_ms: 12000 },
    });
    for (const item of items) expect(isThreadItem(item)).toBe(true);
  });

  it("reads plain-text tool outputs, unparseable arguments, images and aborted turns", () => {
    const jsonl = [
      line("event_msg", { type: "task_started" }),
      line("response_item", {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "look" },
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==" },
        ],
      }),
      line("response_item", {
        type: "function_call",
        name: "exec_command",
        arguments: "{not json",
        call_id: "c1",
      }),
      line("response_item", {
        type: "function_call_output",
        call_id: "c1",
        output: "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nno such file",
      }),
      line("response_item", {
        type: "local_shell_call",
        call_id: "c2",
        status: "completed",
        action: { type: "exec", command: ["ls", "-la"] },
      }),
      line("response_item", {
        type: "function_call_output",
        call_id: "c2",
        output: { content: "total 0", success: true },
      }),
      line("event_msg", { type: "turn_aborted", reason: "interrupted" }),
    ].join("\n");
    const { items, problems } = convertCodexRollout(jsonl);
    expect(problems).toEqual([]);
    expect(briefs(items)).toEqual([
      "look\n[image: image/png, 16 bytes]",
      "exec_command → {not json",
      "→ Exit code: 2 (4 lines)",
      "local_shell → ls -la",
      "→ total 0 (1 line)",
      "Turn aborted: interrupted",
      "Turn complete",
    ]);
    expect(items[1]!.metadata).toMatchObject({ tool: { input: "{not json" } });
    expect(items[2]!.metadata).toMatchObject({ tool: { is_error: true } });
  });

  it("without task events, a prompt after agent activity closes the turn; the oldest bare format is read too", () => {
    const jsonl = [
      JSON.stringify({ id: SESSION, timestamp: "2025-05-01T10:00:00.000Z", instructions: null }),
      JSON.stringify({ record_type: "state" }),
      JSON.stringify({ type: "message", role: "user", content: [{ type: "input_text", text: "first" }] }),
      JSON.stringify({ type: "message", role: "assistant", content: [{ type: "output_text", text: "one" }] }),
      JSON.stringify({ type: "message", role: "user", content: [{ type: "input_text", text: "second" }] }),
      JSON.stringify({ type: "message", role: "assistant", content: [{ type: "output_text", text: "two" }] }),
    ].join("\n");
    const { items, sessionId, problems } = convertCodexRollout(jsonl);
    expect(problems).toEqual([]);
    expect(sessionId).toBe(SESSION);
    expect(types(items)).toEqual(["post", "text", "turn_end", "post", "text", "turn_end"]);
    expect(items[2]!.metadata).toMatchObject({ stats: { input_tokens: 0, duration_ms: null } });
  });

  it.each<[string, string, string]>([
    ["not JSON", "{", "not valid JSON"],
    ["no type", '{"payload":{}}', "no string type"],
    ["a response_item without payload", '{"type":"response_item"}', "no payload object"],
    ["an event_msg with a string payload", '{"type":"event_msg","payload":"x"}', "no payload object"],
    [
      "a function_call without call_id",
      '{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}"}}',
      "no string call_id",
    ],
    [
      "a function_call without name",
      '{"type":"response_item","payload":{"type":"function_call","arguments":"{}","call_id":"c"}}',
      "no string name",
    ],
    [
      "an output without call_id",
      '{"type":"response_item","payload":{"type":"function_call_output","output":"x"}}',
      "no string call_id",
    ],
  ])("reports %s with its line number and goes on", (_, bad, message) => {
    const good = line("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "fine" }],
    });
    const { items, problems } = convertCodexRollout([good, bad, good].join("\n"));
    expect(problems).toEqual([{ line: 2, message: expect.stringContaining(message) }]);
    expect(briefs(items)).toEqual(["fine", "fine", "Turn complete"]);
  });

  it("ignores line and payload types it does not know", () => {
    const jsonl = [
      line("future_line_type", { anything: true }),
      line("response_item", { type: "ghost_snapshot", ghost_commit: {} }),
      line("event_msg", { type: "exec_command_begin", call_id: "c" }),
      line("event_msg", { type: "agent_reasoning", text: "duplicate of a reasoning item" }),
    ].join("\n");
    expect(convertCodexRollout(jsonl)).toEqual({ items: [], problems: [], sessionId: undefined });
  });
});
