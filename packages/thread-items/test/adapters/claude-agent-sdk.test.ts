import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { claudeAgentSdkItems, createClaudeAgentSdkAdapter } from "../../src/adapters/claude-agent-sdk.js";
import { isThreadItem } from "../../src/schema/parse-thread-item.js";
import type { ThreadItem } from "../../src/schema/thread-item-schema.js";
import { SDK_MESSAGE_SAMPLES } from "../support/sdk-messages.js";

const SESSION = "3c1d2e5f-0000-4000-8000-000000000001";
const init = {
  type: "system",
  subtype: "init",
  session_id: SESSION,
  model: "claude-sonnet-4-5",
  cwd: "/repo",
  tools: ["Bash"],
};
const assistant = (content: unknown[], uuid = "a1") => ({
  type: "assistant",
  uuid,
  session_id: SESSION,
  parent_tool_use_id: null,
  message: { id: "m1", role: "assistant", content },
});
const user = (content: unknown, uuid = "u1") => ({
  type: "user",
  uuid,
  session_id: SESSION,
  parent_tool_use_id: null,
  message: { role: "user", content },
});
const result = (extra: Record<string, unknown> = {}) => ({
  type: "result",
  subtype: "success",
  is_error: false,
  duration_ms: 9876,
  num_turns: 2,
  result: "Done.",
  session_id: SESSION,
  usage: {
    input_tokens: 12,
    cache_creation_input_tokens: 300,
    cache_read_input_tokens: 20000,
    output_tokens: 700,
  },
  ...extra,
});

const convert = (messages: unknown[]) => {
  const adapter = createClaudeAgentSdkAdapter();
  const items = [...messages.flatMap((message) => adapter.push(message)), ...adapter.end()];
  return { items, adapter };
};
const types = (items: ThreadItem[]) =>
  items.map((item) => (item.metadata as { status?: string })?.status ?? item.metadata?.type);

describe("createClaudeAgentSdkAdapter", () => {
  it("captures the session id from init and turns a query into items ending in turn_end", () => {
    const { items, adapter } = convert([
      init,
      {
        type: "stream_event",
        event: { type: "content_block_delta", delta: { type: "text_delta", text: "Let" } },
      },
      assistant([
        { type: "thinking", thinking: "Check the tests.", signature: "s" },
        { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "npm test" } },
      ]),
      user([{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "ok" }] }]),
      assistant([{ type: "text", text: "Done." }], "a2"),
      result(),
    ]);
    expect(adapter.sessionId).toBe(SESSION);
    expect(adapter.problems).toEqual([]);
    expect(types(items)).toEqual([
      "session_started",
      "thinking",
      "tool_call",
      "tool_result",
      "text",
      "turn_end",
    ]);
    expect(items.at(-1)!.metadata).toEqual({
      type: "turn_end",
      stats: { input_tokens: 20312, input_tokens_cached: 20000, output_tokens: 700, duration_ms: 9876 },
    });
    expect(items.map((item) => item.id)).toEqual([undefined, "a1:0", "a1:1", "u1", "a2", undefined]);
    for (const item of items) expect(isThreadItem(item)).toBe(true);
  });

  it("reports a failed query as a status before its turn_end", () => {
    const { items } = convert([
      init,
      result({
        subtype: "error_max_turns",
        is_error: true,
        result: undefined,
        errors: ["Reached maximum number of turns (3)"],
      }),
    ]);
    expect(types(items)).toEqual(["session_started", "error_max_turns", "turn_end"]);
    expect(items[1]!.metadata).toMatchObject({ detail: "Reached maximum number of turns (3)" });
  });

  it("maps compaction to status items and ignores message types it does not know", () => {
    const { items, adapter } = convert([
      { type: "system", subtype: "status", status: "compacting" },
      {
        type: "system",
        subtype: "compact_boundary",
        compact_metadata: { trigger: "manual", pre_tokens: 90000 },
      },
      { type: "system", subtype: "status", status: null },
      { type: "tool_progress", tool_use_id: "t", elapsed_time_seconds: 3 },
      { type: "auth_status", isAuthenticating: false },
      { type: "future_message_kind", payload: {} },
    ]);
    expect(types(items)).toEqual(["compacting_context", "context_compacted"]);
    expect(items[1]!.metadata).toMatchObject({ detail: "manual compaction at 90,000 tokens" });
    expect(adapter.problems).toEqual([]);
  });

  it("reports bad messages by position and goes on", () => {
    const { items, adapter } = convert([
      init,
      "not a message",
      null,
      { type: 5 },
      { type: "assistant" },
      assistant([{ type: "tool_use", name: "Bash", input: {} }]),
      user(42),
      assistant([{ type: "text", text: "still here" }], "a9"),
    ]);
    expect(adapter.problems.map((problem) => problem.line)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(adapter.problems[4]!.message).toContain("without a string id");
    expect(items.map((item) => item.content[0]!.text)).toEqual([
      "Session started",
      "still here",
      "Turn complete",
    ]);
  });

  it("yields items as messages arrive from an async stream, and stops on abort", async () => {
    async function* query() {
      yield init;
      yield assistant([{ type: "text", text: "one" }]);
      yield result();
    }
    const adapter = createClaudeAgentSdkAdapter();
    const seen: string[] = [];
    for await (const item of claudeAgentSdkItems(query(), { adapter })) seen.push(item.content[0]!.text);
    expect(seen).toEqual(["Session started", "one", "Turn complete"]);
    expect(adapter.sessionId).toBe(SESSION);

    const controller = new AbortController();
    const aborted = (async () => {
      for await (const item of claudeAgentSdkItems(query(), { signal: controller.signal })) {
        if (item.metadata?.type === "status") controller.abort();
      }
    })();
    await expectStowageError(aborted, "ABORTED");
  });
});

describe("prompts and failures the Agent SDK stream carries", () => {
  const usage = {
    input_tokens: 3,
    cache_creation_input_tokens: 500,
    cache_read_input_tokens: 12000,
    output_tokens: 40,
  };

  it("posts only what a human typed: no subagent prompt, meta message, compaction summary or IDE context (defect 1)", () => {
    const { items } = convert([
      init,
      // Resumed sessions and getSessionMessages hand back the transcript's meta messages as they are.
      {
        type: "user",
        parent_tool_use_id: null,
        isMeta: true,
        message: {
          role: "user",
          content:
            "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
        },
        uuid: "u-caveat",
        session_id: SESSION,
      },
      {
        type: "user",
        parent_tool_use_id: null,
        isCompactSummary: true,
        isVisibleInTranscriptOnly: true,
        message: {
          role: "user",
          content:
            "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis: …",
        },
        uuid: "u-summary",
        session_id: SESSION,
      },
      user(
        [
          {
            type: "text",
            text: "<ide_opened_file>The user opened the file /repo/src/parser.ts in the IDE. This may or may not be related to the current task.</ide_opened_file>",
          },
          { type: "text", text: "fix the parser" },
        ],
        "u-typed",
      ),
      {
        type: "assistant",
        uuid: "a-task",
        session_id: SESSION,
        parent_tool_use_id: null,
        message: {
          id: "msg_task",
          role: "assistant",
          content: [
            { type: "tool_use", id: "toolu_task", name: "Task", input: { prompt: "explore the repo" } },
          ],
          usage,
        },
      },
      // The subagent's prompt, streamed with its parent tool call.
      {
        type: "user",
        uuid: "u-sub",
        session_id: SESSION,
        parent_tool_use_id: "toolu_task",
        message: { role: "user", content: [{ type: "text", text: "explore the repo" }] },
      },
    ]);
    expect(items.map((item) => [types([item])[0] ?? "post", item.content[0]!.text])).toEqual([
      ["session_started", "Session started"],
      [
        "ide_opened_file",
        "IDE: The user opened the file /repo/src/parser.ts in the IDE. This may or may not be related to the current task.",
      ],
      ["post", "fix the parser"],
      ["tool_call", "Task → explore the repo"],
      ["subagent_prompt", "Subagent prompt: explore the repo"],
      ["turn_end", "Turn complete"],
    ]);
  });

  it("yields a stream_failed status and the turn's tokens when the stream throws, then throws on (defect 6)", async () => {
    const exited = new Error("Claude Code process exited with code 1");
    async function* query() {
      yield init;
      yield {
        type: "assistant",
        uuid: "a1",
        session_id: SESSION,
        parent_tool_use_id: null,
        message: { id: "msg_1", role: "assistant", content: [{ type: "text", text: "working" }], usage },
      };
      throw exited;
    }
    const seen: ThreadItem[] = [];
    await expect(
      (async () => {
        for await (const item of claudeAgentSdkItems(query())) seen.push(item);
      })(),
    ).rejects.toBe(exited);
    expect(types(seen)).toEqual(["session_started", "text", "stream_failed", "turn_end"]);
    expect(seen[2]!.metadata).toEqual({
      type: "status",
      status: "stream_failed",
      detail: "Claude Code process exited with code 1",
    });
    expect(seen[3]!.metadata).toEqual({
      type: "turn_end",
      stats: { input_tokens: 12503, input_tokens_cached: 12000, output_tokens: 40, duration_ms: null },
    });
  });
});

describe("the Agent SDK's message union, type by type", () => {
  it("keeps the tokens of every API message when the stream ends without a result (defect 6)", () => {
    const usage = {
      input_tokens: 3,
      cache_creation_input_tokens: 500,
      cache_read_input_tokens: 12000,
      output_tokens: 40,
    };
    const call = (id: string, uuid: string, content: unknown[]) => ({
      type: "assistant",
      uuid,
      session_id: SESSION,
      parent_tool_use_id: null,
      message: { id, type: "message", role: "assistant", model: "claude-sonnet-4-5", content, usage },
    });
    const { items } = convert([
      init,
      // One API message sent as two SDK messages (one per block), each with the message's usage.
      call("msg_1", "a1", [{ type: "thinking", thinking: "Run the tests.", signature: "s" }]),
      call("msg_1", "a2", [
        { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "npm test" } },
      ]),
      user([{ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }]),
      call("msg_2", "a3", [{ type: "text", text: "Green." }]),
    ]);
    // Two API calls: 2 × (3 + 500 + 12000) in, 2 × 12000 cached, 2 × 40 out.
    expect(items.at(-1)!.metadata).toEqual({
      type: "turn_end",
      stats: { input_tokens: 25006, input_tokens_cached: 24000, output_tokens: 80, duration_ms: null },
    });
  });

  it("reads a result without a subtype as a success unless it says it is an error (defect 6)", () => {
    expect(
      types(convert([init, { type: "result", duration_ms: 10, result: "Done.", session_id: SESSION }]).items),
    ).toEqual(["session_started", "turn_end"]);
    expect(
      types(
        convert([
          init,
          { type: "result", is_error: true, result: "Credit balance is too low", session_id: SESSION },
        ]).items,
      ),
    ).toEqual(["session_started", "error", "turn_end"]);
  });

  const common = { uuid: "9d1c6a4e-0000-4000-8000-00000000beef", session_id: SESSION };

  it.each(SDK_MESSAGE_SAMPLES)("%s", (_, message, expected) => {
    const adapter = createClaudeAgentSdkAdapter();
    const items = adapter.push(message);
    expect(adapter.problems).toEqual([]);
    expect(
      items.map(
        (item) => (item.metadata as { status?: string } | undefined)?.status ?? item.metadata?.type ?? "post",
      ),
    ).toEqual(expected);
    for (const item of items) expect(isThreadItem(item)).toBe(true);
  });

  it("shows what a notice says in its brief", () => {
    const briefOf = (message: Record<string, unknown>) =>
      createClaudeAgentSdkAdapter().push(message)[0]!.content[0]!.text;
    expect(briefOf(SDK_MESSAGE_SAMPLES.find(([name]) => name === "SDKAPIRetryMessage")![1])).toBe(
      "Api retry: attempt 2 of 10 in 4 s (overloaded, HTTP 529)",
    );
    expect(briefOf(SDK_MESSAGE_SAMPLES.find(([name]) => name === "SDKPermissionDeniedMessage")![1])).toBe(
      "Permission denied: Bash",
    );
    expect(briefOf(SDK_MESSAGE_SAMPLES.find(([name]) => name === "SDKTaskNotificationMessage")![1])).toBe(
      "Task completed: Tests passed",
    );
    expect(briefOf(SDK_MESSAGE_SAMPLES.find(([name]) => name === "SDKRateLimitEvent")![1])).toBe(
      "Rate limited: five_hour, resets 2026-05-11T11:46:40.000Z",
    );
  });

  it("does not post user messages no human typed: task notifications, peer messages, synthetic ones", () => {
    const from = (origin: unknown, extra: Record<string, unknown> = {}) => ({
      type: "user",
      parent_tool_use_id: null,
      message: { role: "user", content: 'Agent "lint" finished' },
      ...(origin === undefined ? {} : { origin }),
      ...extra,
      ...common,
    });
    const { items } = convert([
      from({ kind: "task-notification" }),
      from({ kind: "peer", from: "session-2" }),
      from({ kind: "channel", server: "slack" }),
      from(undefined, { isSynthetic: true }),
      from({ kind: "human" }),
    ]);
    expect(types(items)).toEqual(["task_notification", "peer_message", "channel_message", undefined]);
  });
});
