import { describe, expect, it } from "vitest";
import { isThreadItem } from "../schema/parse-thread-item.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import {
  convertClaudeCodeTranscript,
  createClaudeCodeTranscriptConverter,
} from "./claude-code-transcript.js";

const SESSION = "0f8e4b4c-3a43-4e38-9a7e-5a1c2c1e9d10";
let clock = Date.parse("2025-11-03T10:00:00.000Z");
const at = (seconds = 1) => {
  clock += seconds * 1000;
  return new Date(clock).toISOString();
};

const line = (record: Record<string, unknown>) => JSON.stringify({ sessionId: SESSION, ...record });
const prompt = (text: unknown, uuid = "u-prompt") =>
  line({ type: "user", uuid, timestamp: at(), message: { role: "user", content: text } });
const assistant = (
  block: Record<string, unknown>,
  id = "msg_1",
  uuid = "a-1",
  usage?: Record<string, number>,
) =>
  line({
    type: "assistant",
    uuid,
    timestamp: at(),
    message: {
      id,
      role: "assistant",
      content: [block],
      usage: usage ?? {
        input_tokens: 5,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 1000,
        output_tokens: 50,
      },
    },
  });
const toolResult = (id: string, content: unknown, extra: Record<string, unknown> = {}) =>
  line({
    type: "user",
    uuid: `r-${id}`,
    timestamp: at(),
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content, ...extra }] },
  });

const types = (items: ThreadItem[]) => items.map((item) => item.metadata?.type ?? "post");
const briefs = (items: ThreadItem[]) => items.map((item) => item.content[0]!.text);

describe("convertClaudeCodeTranscript", () => {
  it("turns one turn into a post, thinking, call, result, text and turn_end", () => {
    const jsonl = [
      prompt("fix the test"),
      assistant({ type: "thinking", thinking: "Look at the test first.", signature: "sig" }, "msg_1", "a-1"),
      assistant(
        { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "npm test" } },
        "msg_1",
        "a-2",
      ),
      toolResult("toolu_1", "FAIL test/a.test.ts\n1 failed", { is_error: true }),
      assistant({ type: "text", text: "Fixed." }, "msg_2", "a-3"),
      line({ type: "system", subtype: "turn_duration", durationMs: 4321, uuid: "s-1", timestamp: at() }),
    ].join("\n");
    const { items, problems, sessionId } = convertClaudeCodeTranscript(jsonl);
    expect(problems).toEqual([]);
    expect(sessionId).toBe(SESSION);
    expect(types(items)).toEqual(["post", "thinking", "tool_call", "tool_result", "text", "turn_end"]);
    expect(briefs(items)).toEqual([
      "fix the test",
      "[thinking] Look at the test first.",
      "Bash → npm test",
      "→ FAIL test/a.test.ts (2 lines)",
      "Fixed.",
      "Turn complete",
    ]);
    expect(items[3]!.metadata).toEqual({
      type: "tool_result",
      tool: { invocation_id: "toolu_1", is_error: true, output: "FAIL test/a.test.ts\n1 failed" },
    });
    // msg_1 appears on two lines and counts once.
    expect(items[5]!.metadata).toEqual({
      type: "turn_end",
      stats: { input_tokens: 2210, input_tokens_cached: 2000, output_tokens: 100, duration_ms: 4321 },
    });
    expect(items.map((item) => item.id)).toEqual(["u-prompt", "a-1", "a-2", "r-toolu_1", "a-3", undefined]);
    for (const item of items) expect(isThreadItem(item)).toBe(true);
  });

  it("without turn_duration lines, the next prompt (or the end) closes a turn, timed by timestamps", () => {
    clock = Date.parse("2025-11-03T10:00:00.000Z");
    const jsonl = [
      prompt("one", "p1"),
      assistant({ type: "text", text: "a" }, "m1", "a1"),
      prompt("two", "p2"),
      assistant({ type: "text", text: "b" }, "m2", "a2"),
    ].join("\n");
    const { items } = convertClaudeCodeTranscript(jsonl);
    expect(types(items)).toEqual(["post", "text", "turn_end", "post", "text", "turn_end"]);
    expect((items[2]!.metadata as { stats: { duration_ms: number } }).stats.duration_ms).toBe(1000);
  });

  it("gives several items of one line ids <uuid>:<n>, and no id when the uuid is hostile", () => {
    const jsonl = [
      line({
        type: "assistant",
        uuid: "multi",
        message: {
          id: "m",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
        },
      }),
      line({
        type: "assistant",
        uuid: "../../etc/passwd",
        message: { id: "n", content: [{ type: "text", text: "c" }] },
      }),
    ].join("\n");
    const { items } = convertClaudeCodeTranscript(jsonl);
    expect(items.slice(0, 3).map((item) => item.id)).toEqual(["multi:0", "multi:1", undefined]);
  });

  it("shows pasted and tool-result images as placeholders", () => {
    const image = {
      type: "image",
      source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgoAAAANSUhEUg==" },
    };
    const jsonl = [
      prompt([{ type: "text", text: "see this" }, image]),
      toolResult("toolu_9", [image, { type: "text", text: "caption" }]),
    ].join("\n");
    const { items } = convertClaudeCodeTranscript(jsonl);
    expect(items[0]!.content[0]!.text).toBe("see this\n[image: image/png, 16 bytes]");
    expect((items[1]!.metadata as { tool: { output: string } }).tool.output).toBe(
      "[image: image/png, 16 bytes]\ncaption",
    );
  });

  it("skips meta lines, compaction summaries and record types it does not know, and maps statuses", () => {
    const jsonl = [
      line({ type: "summary", summary: "x", leafUuid: "l" }),
      line({
        type: "user",
        isMeta: true,
        message: { role: "user", content: "<local-command-caveat>…</local-command-caveat>" },
      }),
      line({ type: "file-history-snapshot", messageId: "m", snapshot: {} }),
      line({ type: "queue-operation", operation: "enqueue", content: "later" }),
      line({ type: "progress", data: { type: "hook_progress" } }),
      line({ type: "attachment", attachment: {} }),
      line({ type: "custom-title", customTitle: "t" }),
      line({ type: "brand-new-record-type", whatever: { deeply: [1] } }),
      line({
        type: "system",
        subtype: "compact_boundary",
        compactMetadata: { trigger: "auto", preTokens: 155234 },
      }),
      line({
        type: "user",
        isCompactSummary: true,
        message: { role: "user", content: "This session is being continued…" },
      }),
      line({ type: "system", subtype: "local_command", content: "<command-name>/model</command-name>" }),
      line({ type: "system", subtype: "api_error", error: { message: "overloaded" } }),
      line({
        type: "user",
        message: {
          role: "user",
          content: [{ type: "text", text: "[Request interrupted by user for tool use]" }],
        },
      }),
      line({
        type: "assistant",
        isApiErrorMessage: true,
        message: { id: "e", content: [{ type: "text", text: "API Error: 529" }] },
      }),
    ].join("\n");
    const { items, problems } = convertClaudeCodeTranscript(jsonl);
    expect(problems).toEqual([]);
    expect(items.map((item) => (item.metadata as { status?: string }).status ?? item.metadata?.type)).toEqual(
      ["context_compacted", "api_error", "interrupted", "api_error", "turn_end"],
    );
    expect(items[0]!.metadata).toMatchObject({ detail: "auto compaction at 155,234 tokens" });
  });

  it("can leave what the human typed out", () => {
    const { items } = convertClaudeCodeTranscript(
      [prompt("hello"), assistant({ type: "text", text: "hi" })].join("\n"),
      { includeUserPrompts: false },
    );
    expect(types(items)).toEqual(["text", "turn_end"]);
  });

  it("is the same fed line by line as in one piece", () => {
    const lines = [
      prompt("go"),
      assistant({ type: "text", text: "ok" }),
      "not json",
      line({ type: "system", subtype: "turn_duration", durationMs: 5 }),
    ];
    const converter = createClaudeCodeTranscriptConverter();
    const streamed = [...lines.flatMap((each) => converter.push(each)), ...converter.end()];
    const whole = convertClaudeCodeTranscript(lines.join("\n"));
    expect(streamed).toEqual(whole.items);
    expect(converter.problems).toEqual(whole.problems);
  });
});

describe("malformed and hostile transcript lines are reported with their line number and skipped", () => {
  let deep = '"bottom"';
  for (let i = 0; i < 50_000; i++) deep = `[${deep}]`;

  it.each<[string, string, string]>([
    ["not JSON", "{oops", "not valid JSON"],
    ["a truncated line", '{"type":"assistant","message":{"content":[{"type":"te', "not valid JSON"],
    ["a JSON array", "[1,2,3]", "not a JSON object"],
    ["a JSON string", '"user"', "not a JSON object"],
    ["null", "null", "not a JSON object"],
    ["no type", '{"message":{}}', "no string type"],
    ["a numeric type", '{"type":7}', "no string type"],
    ["an assistant without message", '{"type":"assistant"}', "no message object"],
    [
      "assistant content that is a number",
      '{"type":"assistant","message":{"content":5}}',
      "no message.content array",
    ],
    [
      "a tool_use without id",
      '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{}}]}}',
      "tool_use block without a string id",
    ],
    [
      "a tool_use with an empty name",
      '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"","input":{}}]}}',
      "tool name must be a non-empty string",
    ],
    [
      "a tool_result without tool_use_id",
      '{"type":"user","message":{"content":[{"type":"tool_result","content":"x"}]}}',
      "without a string tool_use_id",
    ],
    ["a user record without message", '{"type":"user","message":"hi"}', "no message object"],
    ["a NUL inside a string", '{"type":"user","message":{"content":"a\\u0000b"}}', ""],
    ["nesting 50,000 deep", `{"type":"user","message":{"content":"x"},"extra":${deep}}`, ""],
  ])("%s", (_, bad, message) => {
    const jsonl = [prompt("before"), bad, assistant({ type: "text", text: "after" })].join("\n");
    const { items, problems } = convertClaudeCodeTranscript(jsonl);
    if (message === "") {
      // Odd but valid: converted, nothing reported.
      expect(problems).toEqual([]);
    } else {
      expect(problems).toEqual([{ line: 2, message: expect.stringContaining(message) }]);
    }
    expect(briefs(items)).toContain("before");
    expect(briefs(items)).toContain("after");
    for (const item of items) expect(isThreadItem(item)).toBe(true);
  });

  it("quotes no raw control characters from a bad line in the problem", () => {
    const { problems } = convertClaudeCodeTranscript("\u0000\u001b[31mevil");
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).not.toMatch(/[\u0000-\u001f]/);
  });

  it("survives a 20 MB line of garbage, blank lines, CRLF endings, a BOM and invalid UTF-8", () => {
    const text = `\uFEFF${prompt("first")}\r\n\r\n${"x".repeat(20_000_000)}\r\n${assistant({ type: "text", text: "ok" })}\r\n`;
    const { items, problems } = convertClaudeCodeTranscript(text);
    expect(problems).toEqual([{ line: 3, message: expect.stringContaining("not valid JSON") }]);
    expect(briefs(items)).toEqual(["first", "ok", "Turn complete"]);
    const bytes = Buffer.concat([Buffer.from(`${prompt("café")}\n`), Buffer.from([0xff, 0xfe, 0x0a])]);
    const decoded = convertClaudeCodeTranscript(bytes);
    expect(decoded.items[0]!.content[0]!.text).toBe("café");
    expect(decoded.problems).toEqual([{ line: 2, message: expect.stringContaining("not valid JSON") }]);
  });

  it("converts empty input to nothing and rejects input that is not text or bytes", () => {
    expect(convertClaudeCodeTranscript("")).toEqual({ items: [], problems: [], sessionId: undefined });
    expect(() => convertClaudeCodeTranscript({} as never)).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
  });
});
