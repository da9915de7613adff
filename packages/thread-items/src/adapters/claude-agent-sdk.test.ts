import { describe, expect, it } from "vitest";
import { isThreadItem } from "../schema/parse-thread-item.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { claudeAgentSdkItems, createClaudeAgentSdkAdapter } from "./claude-agent-sdk.js";

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
    await expect(aborted).rejects.toMatchObject({ code: "ABORTED" });
  });
});
