import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_BUDGET_BYTES, measureThreadItem } from "../src/budget/fit-to-budget.js";
import { createClaudeAgentSdkAdapter, fitToBudget, isThreadItem, type ThreadItem } from "../src/index.js";
import {
  convertClaudeCodeTranscript,
  convertCodexRollout,
  convertPiSession,
} from "./support/convert-whole.js";

// Records of each format built from a few realistic shapes, with ids drawn from a small pool (so
// calls and results repeat and cross), odd text (tags, control characters, a 400 KB output, a
// blob ref), and now and then a broken line.
const LONG = "npm verbose cli node\n".repeat(20_000);
const REF = `blob:sha256:${"c0".repeat(32)}`;
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAfbLI3wAAAABJRU5ErkJggg==";

const id = fc.constantFrom("t1", "t2", "t3", "call_a", "../x", "");
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    "<command-name>/clear</command-name>",
    "<local-command-stdout>done</local-command-stdout>",
    "<task-notification><status>failed</status></task-notification>",
    "<system-reminder>x</system-reminder>",
    "[Request interrupted by user]",
    "\u0003\u001b[31m",
    LONG,
  ),
);
const timestamp = fc
  .date({ min: new Date("2025-01-01"), max: new Date("2026-12-31"), noInvalidDate: true })
  .map((date) => date.toISOString());
const count = fc.nat({ max: 200_000 });
const garbage = fc.oneof(fc.json(), fc.string({ maxLength: 30 }), fc.constant("{"));

const anthropicImage = fc.record({
  type: fc.constant("image"),
  source: fc.record({
    type: fc.constant("base64"),
    media_type: fc.constant("image/png"),
    data: fc.constantFrom(PNG, REF, ""),
  }),
});
const anthropicBlock = fc.oneof(
  fc.record({ type: fc.constant("text"), text }),
  fc.record({ type: fc.constant("thinking"), thinking: text, signature: fc.constant("s") }),
  fc.record({
    type: fc.constant("tool_use"),
    id,
    name: fc.constantFrom("Bash", "Read", "mcp__x__y", ""),
    input: fc.dictionary(fc.string({ maxLength: 5 }), text, { maxKeys: 2 }),
  }),
);
const toolResult = fc.record({
  type: fc.constant("tool_result"),
  tool_use_id: id,
  content: fc.oneof(
    text,
    fc.array(fc.oneof(fc.record({ type: fc.constant("text"), text }), anthropicImage), { maxLength: 3 }),
  ),
  is_error: fc.boolean(),
});
const anthropicUsage = fc.record({
  input_tokens: count,
  cache_read_input_tokens: count,
  cache_creation_input_tokens: count,
  output_tokens: count,
});

const claudeRecord = fc.oneof(
  fc.record({
    type: fc.constant("user"),
    uuid: id,
    timestamp,
    message: fc.record({
      role: fc.constant("user"),
      content: fc.oneof(
        text,
        fc.array(fc.oneof(toolResult, anthropicImage, fc.record({ type: fc.constant("text"), text })), {
          maxLength: 3,
        }),
      ),
    }),
  }),
  fc.record({
    type: fc.constant("assistant"),
    uuid: id,
    timestamp,
    message: fc.record({
      id,
      role: fc.constant("assistant"),
      content: fc.array(anthropicBlock, { maxLength: 3 }),
      usage: anthropicUsage,
    }),
  }),
  fc.record({
    type: fc.constant("system"),
    subtype: fc.constantFrom(
      "compact_boundary",
      "turn_duration",
      "api_error",
      "local_command",
      "stop_hook_summary",
    ),
    content: text,
    durationMs: count,
    hookErrors: fc.array(text, { maxLength: 2 }),
  }),
  fc.record({
    type: fc.constant("queue-operation"),
    operation: fc.constantFrom("enqueue", "dequeue", "remove", "popAll"),
    content: text,
  }),
  fc.record({
    type: fc.constant("attachment"),
    attachment: fc.record({ type: fc.constant("queued_command"), prompt: text }),
  }),
);

const codexOutput = fc.oneof(
  text,
  fc
    .tuple(
      fc.constantFrom(
        "Process exited with code 2",
        "Process exited with code 0",
        "Process running with session ID 7",
      ),
      text,
    )
    .map(
      ([status, body]) =>
        `Chunk ID: a1\nWall time: 1.0 seconds\n${status}\nOriginal token count: 3\nOutput:\n${body}`,
    ),
  text.map((output) => JSON.stringify({ output, metadata: { exit_code: 1 } })),
  fc.array(
    fc.oneof(
      fc.record({ type: fc.constant("input_text"), text }),
      fc.record({
        type: fc.constant("input_image"),
        image_url: fc.constantFrom(`data:image/png;base64,${PNG}`, "x"),
      }),
    ),
    { maxLength: 2 },
  ),
);
const codexPayload = fc.oneof(
  fc.record({
    type: fc.constant("message"),
    role: fc.constantFrom("user", "assistant", "developer"),
    content: fc.array(fc.record({ type: fc.constantFrom("input_text", "output_text"), text }), {
      maxLength: 2,
    }),
  }),
  fc.record({
    type: fc.constant("reasoning"),
    summary: fc.array(fc.record({ type: fc.constant("summary_text"), text }), { maxLength: 2 }),
  }),
  fc.record({
    type: fc.constant("function_call"),
    name: fc.constantFrom("exec_command", "write_stdin", "js", ""),
    namespace: fc.constantFrom(undefined, "mcp__node_repl__"),
    arguments: fc.constantFrom('{"cmd":"ls"}', '{"session_id":7,"chars":"\\u0003"}', "{bad"),
    call_id: id,
  }),
  fc.record({
    type: fc.constantFrom("function_call_output", "custom_tool_call_output"),
    call_id: id,
    output: codexOutput,
  }),
  fc.record({
    type: fc.constant("custom_tool_call"),
    name: fc.constant("apply_patch"),
    call_id: id,
    input: text,
  }),
  fc.record({
    type: fc.constant("web_search_call"),
    status: fc.constantFrom("completed", "failed", undefined),
    action: fc.record({ type: fc.constant("search"), query: fc.constantFrom("a", "b") }),
  }),
);
const codexEvent = fc.oneof(
  fc.record({ type: fc.constantFrom("task_started", "task_complete", "turn_aborted", "error") }),
  fc.record({
    type: fc.constant("token_count"),
    info: fc.record({
      total_token_usage: fc.record({ input_tokens: count, cached_input_tokens: count, output_tokens: count }),
    }),
  }),
  fc.record({
    type: fc.constant("exec_command_end"),
    call_id: id,
    exit_code: fc.integer({ min: -1, max: 3 }),
    aggregated_output: text,
    source: fc.constantFrom("unified_exec_startup", "user_shell"),
  }),
  fc.record({ type: fc.constant("patch_apply_end"), call_id: id, success: fc.boolean() }),
  fc.record({ type: fc.constant("web_search_end"), call_id: id, query: fc.constantFrom("a", "b") }),
  fc.record({
    type: fc.constant("user_message"),
    message: text,
    images: fc.array(fc.constantFrom(`data:image/png;base64,${PNG}`), { maxLength: 1 }),
  }),
);
const codexRecord = fc.oneof(
  fc.record({ timestamp, type: fc.constant("response_item"), payload: codexPayload }),
  fc.record({ timestamp, type: fc.constant("event_msg"), payload: codexEvent }),
  fc.record({
    timestamp,
    type: fc.constant("session_meta"),
    payload: fc.record({ id, cli_version: fc.constant("0.125.0") }),
  }),
);

const sdkMessage = fc.oneof(
  fc.record({
    type: fc.constant("assistant"),
    uuid: id,
    error: fc.constantFrom(undefined, "overloaded"),
    message: fc.record({ id, content: fc.array(anthropicBlock, { maxLength: 3 }), usage: anthropicUsage }),
  }),
  fc.record({
    type: fc.constant("user"),
    uuid: id,
    isSynthetic: fc.boolean(),
    origin: fc.constantFrom(undefined, { kind: "human" }, { kind: "peer", from: "s" }),
    message: fc.record({ content: fc.oneof(text, fc.array(toolResult, { maxLength: 2 })) }),
  }),
  fc.record({
    type: fc.constant("result"),
    subtype: fc.constantFrom(undefined, "success", "error_max_turns", "Not A Token"),
    is_error: fc.boolean(),
    usage: anthropicUsage,
    duration_ms: count,
    result: text,
  }),
  fc.record({
    type: fc.constant("system"),
    subtype: fc.constantFrom(
      "init",
      "api_retry",
      "permission_denied",
      "task_notification",
      "hook_response",
      "informational",
      "status",
      "mirror_error",
    ),
    content: text,
    message: text,
    summary: text,
    outcome: fc.constantFrom("error", "success"),
    error: text,
  }),
  fc.record({
    type: fc.constantFrom("rate_limit_event", "conversation_reset", "tool_progress", "stream_event"),
    rate_limit_info: fc.record({ status: fc.constantFrom("rejected", "allowed") }),
  }),
);

const piRecord = fc.oneof(
  fc.record({
    type: fc.constant("message"),
    id,
    timestamp,
    message: fc.record({
      role: fc.constant("user"),
      content: fc.oneof(
        text,
        fc.array(
          fc.oneof(
            fc.record({ type: fc.constant("text"), text }),
            fc.record({
              type: fc.constant("image"),
              data: fc.constantFrom(PNG, REF),
              mimeType: fc.constant("image/png"),
            }),
          ),
          { maxLength: 2 },
        ),
      ),
    }),
  }),
  fc.record({
    type: fc.constant("message"),
    id,
    timestamp,
    message: fc.record({
      role: fc.constant("assistant"),
      content: fc.array(
        fc.oneof(
          fc.record({ type: fc.constant("text"), text }),
          fc.record({ type: fc.constant("thinking"), thinking: text }),
          fc.record({
            type: fc.constant("toolCall"),
            id,
            name: fc.constantFrom("bash", "read"),
            arguments: fc.record({ command: text }),
          }),
        ),
        { maxLength: 3 },
      ),
      usage: fc.record({ input: count, output: count, cacheRead: count, cacheWrite: count }),
      stopReason: fc.constantFrom("stop", "toolUse", "aborted", "error", "length"),
      errorMessage: text,
    }),
  }),
  fc.record({
    type: fc.constant("message"),
    id,
    timestamp,
    message: fc.record({
      role: fc.constant("toolResult"),
      toolCallId: id,
      content: fc.array(fc.record({ type: fc.constant("text"), text }), { maxLength: 2 }),
      isError: fc.boolean(),
    }),
  }),
  fc.record({
    type: fc.constant("message"),
    id,
    timestamp,
    message: fc.record({
      role: fc.constantFrom("bashExecution", "custom", "branchSummary"),
      command: text,
      output: text,
      summary: text,
      content: text,
      customType: fc.constant("ext"),
    }),
  }),
  fc.record({
    type: fc.constantFrom(
      "compaction",
      "branch_summary",
      "custom_message",
      "model_change",
      "thinking_level_change",
      "label",
    ),
    id,
    timestamp,
    summary: text,
    tokensBefore: count,
    content: text,
    provider: fc.constant("openai"),
    modelId: fc.constant("gpt-5"),
  }),
);

/** A transcript: JSONL lines of the format's records, with a broken line now and then. */
const jsonl = (record: fc.Arbitrary<unknown>) =>
  fc
    .array(
      fc.oneof(
        { weight: 9, arbitrary: record.map((value) => JSON.stringify(value)) },
        {
          weight: 1,
          arbitrary: garbage.map((value) => (typeof value === "string" ? value : JSON.stringify(value))),
        },
      ),
      { maxLength: 30 },
    )
    .map((lines) => lines.join("\n"));

/** What every conversion must give, whatever the transcript. */
function expectSound(items: ThreadItem[]): void {
  const results = new Set<string>();
  for (const item of items) {
    expect(isThreadItem(item)).toBe(true);
    const fitted = fitToBudget(item, { localLogPath: "session/threads/main/logs/thread.log" });
    expect(measureThreadItem(fitted)).toBeLessThanOrEqual(DEFAULT_BUDGET_BYTES);
    if (item.metadata?.type === "tool_result") {
      const invocation = (item.metadata as { tool: { invocation_id: string } }).tool.invocation_id;
      expect(results.has(invocation)).toBe(false);
      results.add(invocation);
    }
  }
}

const RUNS = { numRuns: 150 };

describe("property: any transcript gives valid items within budget, at most one tool_result per call", () => {
  it("Claude Code", () => {
    fc.assert(
      fc.property(jsonl(claudeRecord), (input) => expectSound(convertClaudeCodeTranscript(input).items)),
      RUNS,
    );
  });

  it("Codex", () => {
    fc.assert(
      fc.property(jsonl(codexRecord), (input) => expectSound(convertCodexRollout(input).items)),
      RUNS,
    );
  });

  it("pi", () => {
    fc.assert(
      fc.property(jsonl(piRecord), (input) => expectSound(convertPiSession(input).items)),
      RUNS,
    );
  });

  it("Claude Agent SDK", () => {
    const stream = fc.array(
      fc.oneof({ weight: 9, arbitrary: sdkMessage }, { weight: 1, arbitrary: garbage }),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(stream, (messages) => {
        const adapter = createClaudeAgentSdkAdapter();
        expectSound([...messages.flatMap((message) => adapter.push(message)), ...adapter.end()]);
      }),
      RUNS,
    );
  });
});
