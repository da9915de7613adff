import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createClaudeCodeTranscriptConverter } from "../../src/adapters/claude-code-transcript.js";
import { isThreadItem } from "../../src/schema/parse-thread-item.js";
import type { ThreadItem } from "../../src/schema/thread-item-schema.js";
import { convertClaudeCodeTranscript } from "../support/convert-whole.js";

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
  it("sanitizes a tool result's colored output, in the item and its brief", () => {
    const jsonl = [
      prompt("run it"),
      assistant(
        { type: "tool_use", id: "toolu_c", name: "Bash", input: { command: "npm test" } },
        "msg_c",
        "a-c",
      ),
      toolResult("toolu_c", "\u001b[32m✓\u001b[39m 3 passed\r\n\u001b[2K"),
    ].join("\n");
    const { items } = convertClaudeCodeTranscript(jsonl);
    const result = items.find((item) => item.metadata?.type === "tool_result")!;
    expect(result.metadata).toMatchObject({ tool: { output: "✓ 3 passed\n" } });
    expect(result.content[0]!.text).toBe("→ ✓ 3 passed (1 line)");
  });

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
      ["context_compacted", "slash_command", "api_error", "interrupted", "api_error", "turn_end"],
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
    [
      "a tag opened 300,000 times and never closed",
      JSON.stringify({
        type: "user",
        message: { content: `<task-notification>${"<summary>".repeat(300_000)}` },
      }),
      "",
    ],
    [
      "an IDE element opened 300,000 times before typed text",
      JSON.stringify({
        type: "user",
        message: { content: [{ type: "text", text: `${"<ide_selection>".repeat(300_000)}x` }] },
      }),
      "",
    ],
    [
      "100,000 empty reminders in one block",
      JSON.stringify({
        type: "user",
        message: { content: [{ type: "text", text: "<system-reminder></system-reminder>".repeat(100_000) }] },
      }),
      "",
    ],
    [
      "a sidechain prompt that is not text",
      '{"type":"user","isSidechain":true,"message":{"content":[{"type":"text","text":7}]}}',
      "",
    ],
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

  it("converts empty input to nothing and rejects input that is not text or bytes", async () => {
    expect(convertClaudeCodeTranscript("")).toEqual({ items: [], problems: [], sessionId: undefined });
    await expectStowageError(() => convertClaudeCodeTranscript({} as never), "INVALID_INPUT");
  });
});

// Lines as Claude Code 2.0.76 and 2.1.x write them (the fields of real records; ids and text invented).
describe("Claude Code records that real transcripts hold", () => {
  const record = (fields: Record<string, unknown>) =>
    JSON.stringify({
      parentUuid: "ce09de6d-5b4a-4082-bae7-b6ca946ced76",
      isSidechain: false,
      userType: "external",
      cwd: "/Users/user/repo",
      sessionId: SESSION,
      version: "2.0.76",
      gitBranch: "main",
      ...fields,
    });
  const typed = (content: unknown, uuid: string, extra: Record<string, unknown> = {}) =>
    record({ type: "user", message: { role: "user", content }, uuid, timestamp: at(), ...extra });
  const reply = (text: string, uuid: string) =>
    record({
      type: "assistant",
      message: {
        model: "claude-sonnet-4-5-20250929",
        id: `msg_${uuid}`,
        type: "message",
        role: "assistant",
        content: [{ type: "text", text }],
        usage: { input_tokens: 10, cache_read_input_tokens: 100, output_tokens: 5 },
      },
      uuid,
      timestamp: at(),
    });
  const statuses = (items: ThreadItem[]) =>
    items.map(
      (item) => (item.metadata as { status?: string } | undefined)?.status ?? item.metadata?.type ?? "post",
    );

  it("posts nothing for text the harness injected: commands, command output, task notifications, reminders (defect 1)", () => {
    const jsonl = [
      typed(
        "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>",
        "u-clear",
      ),
      typed("<local-command-stdout></local-command-stdout>", "u-empty-stdout"),
      typed(
        "<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args>src/parser.ts</command-args>",
        "u-review",
      ),
      typed(
        "<local-command-stdout>Set model to opus (claude-opus-4-1-20250805)</local-command-stdout>",
        "u-stdout",
      ),
      typed("<local-command-stderr>Error: unknown command /modle</local-command-stderr>", "u-stderr"),
      typed("<bash-input>git status --short</bash-input>", "u-bash"),
      typed(
        "<bash-stdout> M src/parser.ts\n?? notes.md</bash-stdout><bash-stderr></bash-stderr>",
        "u-bash-out",
      ),
      typed(
        '<task-notification>\n<task-id>b7f3a1</task-id>\n<status>completed</status>\n<summary>Background command "npm test" completed (exit code 0)</summary>\n</task-notification>\nRead the output file to retrieve the result: /tmp/claude/tasks/b7f3a1.output',
        "u-task",
      ),
      typed(
        [
          {
            type: "text",
            text: "<system-reminder>\nThe user opened the file src/parser.ts in the IDE.\n</system-reminder>",
          },
        ],
        "u-reminder",
      ),
      typed("fix the <div> in the header", "u-human"),
    ].join("\n");
    const { items, problems } = convertClaudeCodeTranscript(jsonl);
    expect(problems).toEqual([]);
    expect(items.map((item) => [statuses([item])[0], item.id, item.content[0]!.text])).toEqual([
      ["slash_command", "u-clear", "/clear"],
      ["slash_command", "u-review", "/review src/parser.ts"],
      ["command_output", "u-stdout", "Command output: Set model to opus (claude-opus-4-1-20250805)"],
      ["command_error", "u-stderr", "Command error: Error: unknown command /modle"],
      ["user_shell_command", "u-bash", "! git status --short"],
      ["user_shell_output", "u-bash-out", "Shell output: M src/parser.ts"],
      [
        "task_notification",
        "u-task",
        'Task completed: Background command "npm test" completed (exit code 0)',
      ],
      [
        "system_reminder",
        "u-reminder",
        "System reminder: The user opened the file src/parser.ts in the IDE.",
      ],
      ["post", "u-human", "fix the <div> in the header"],
    ]);
    expect(items[4]!.metadata).toEqual({
      type: "status",
      status: "user_shell_command",
      detail: "git status --short",
    });
  });

  it("classifies each text block of a user record: IDE context and reminders beside the typed prompt are statuses (defect 1)", () => {
    const opened =
      "<ide_opened_file>The user opened the file /Users/user/repo/src/parser.ts in the IDE. This may or may not be related to the current task.</ide_opened_file>";
    const selection =
      "<ide_selection>The user selected the lines 12 to 14 from /Users/user/repo/src/parser.ts:\nconst line = raw.trim();\n\nThis may or may not be related to the current task.</ide_selection>";
    const reminder =
      "<system-reminder>\nThe TodoWrite tool hasn't been used recently. Ignore this if it is not relevant.\n</system-reminder>";
    const pasted = {
      type: "image",
      source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
    };
    const jsonl = [
      typed(
        [
          { type: "text", text: opened },
          { type: "text", text: "fix the failing test" },
        ],
        "u-opened",
      ),
      reply("Looking.", "a-1"),
      typed(
        [
          { type: "text", text: selection },
          { type: "text", text: "explain this" },
        ],
        "u-selection",
      ),
      reply("It trims.", "a-2"),
      typed(
        [{ type: "text", text: "what is wrong here" }, pasted, { type: "text", text: reminder }],
        "u-reminder-after",
      ),
      reply("The header.", "a-3"),
      // The VS Code extension may also write the context and the prompt as one string.
      typed(`${opened}\n\nI have this plan document, verify it`, "u-one-string"),
      reply("Verified.", "a-4"),
      typed("<user-memory-input>always use pnpm in this repo</user-memory-input>", "u-memory"),
      typed(
        '<bash-notification>\n<shell-id>bash_1</shell-id>\n<output-file>/tmp/claude/bash_1.out</output-file>\n<status>completed</status>\n<summary>Background command "npm run dev" completed (exit code 0).</summary>\n</bash-notification>',
        "u-bash-note",
      ),
      reply("Noted.", "a-5"),
    ].join("\n");
    const { items, problems } = convertClaudeCodeTranscript(jsonl);
    expect(problems).toEqual([]);
    const shown = items.filter(
      (item) => item.metadata?.type !== "text" && item.metadata?.type !== "turn_end",
    );
    expect(shown.map((item) => [statuses([item])[0], item.id, item.content[0]!.text])).toEqual([
      [
        "ide_opened_file",
        "u-opened:0",
        "IDE: The user opened the file /Users/user/repo/src/parser.ts in the IDE. This may or may not be related to the current task.",
      ],
      ["post", "u-opened:1", "fix the failing test"],
      [
        "ide_selection",
        "u-selection:0",
        "IDE: The user selected the lines 12 to 14 from /Users/user/repo/src/parser.ts:",
      ],
      ["post", "u-selection:1", "explain this"],
      ["post", "u-reminder-after:0", "what is wrong here\n[image: image/png, 8 bytes]"],
      [
        "system_reminder",
        "u-reminder-after:1",
        "System reminder: The TodoWrite tool hasn't been used recently. Ignore this if it is not relevant.",
      ],
      [
        "ide_opened_file",
        "u-one-string:0",
        "IDE: The user opened the file /Users/user/repo/src/parser.ts in the IDE. This may or may not be related to the current task.",
      ],
      ["post", "u-one-string:1", "I have this plan document, verify it"],
      ["memory_input", "u-memory", "Memory: always use pnpm in this repo"],
      [
        "task_notification",
        "u-bash-note",
        'Task completed: Background command "npm run dev" completed (exit code 0).',
      ],
    ]);
    // A reminder before the typed text: the same, in the order written.
    const before = convertClaudeCodeTranscript(
      typed(
        [
          { type: "text", text: reminder },
          { type: "text", text: "fix the failing test" },
        ],
        "u-before",
      ),
    );
    expect(statuses(before.items).slice(0, 2)).toEqual(["system_reminder", "post"]);
    expect(before.items[1]!.content[0]!.text).toBe("fix the failing test");
    // Without prompts, only the statuses remain.
    const quiet = convertClaudeCodeTranscript(jsonl, { includeUserPrompts: false });
    expect(statuses(quiet.items).filter((status) => status === "post")).toEqual([]);
    expect(statuses(quiet.items)).toContain("ide_selection");
  });

  it("posts nothing for a subagent's transcript: its prompt was written by the main agent or the harness", () => {
    const sidechain = { isSidechain: true, agentId: "a485154" };
    const jsonl = [
      typed("Warmup", "u-warmup", sidechain),
      record({
        type: "assistant",
        isSidechain: true,
        agentId: "a485154",
        message: {
          model: "claude-haiku-4-5-20251001",
          id: "msg_warm",
          type: "message",
          role: "assistant",
          content: [{ type: "text", text: "I'm ready to help explore the codebase." }],
          usage: { input_tokens: 3, cache_read_input_tokens: 0, output_tokens: 12 },
        },
        uuid: "a-warm",
        timestamp: at(),
      }),
      typed(
        "Analyze the existing CLI command structure and create a specification for missing commands.",
        "u-task-prompt",
        sidechain,
      ),
    ].join("\n");
    const { items } = convertClaudeCodeTranscript(jsonl);
    expect(items.map((item) => [statuses([item])[0], item.content[0]!.text])).toEqual([
      ["subagent_prompt", "Subagent prompt: Warmup"],
      ["text", "I'm ready to help explore the codebase."],
      ["turn_end", "Turn complete"],
      [
        "subagent_prompt",
        "Subagent prompt: Analyze the existing CLI command structure and create a specification for missing commands.",
      ],
    ]);
  });

  it("posts a message typed while the agent worked when the queue hands it to the model (defect 5)", () => {
    const queue = (operation: string, content?: string) =>
      JSON.stringify({
        type: "queue-operation",
        operation,
        timestamp: at(),
        sessionId: SESSION,
        ...(content === undefined ? {} : { content }),
      });
    const jsonl = [
      typed("analyze the codex folder", "u-1"),
      reply("Reading the folder.", "a-1"),
      // Typed, taken back into the input box, edited and typed again: only the last one counts.
      queue("enqueue", "check 019b7f07"),
      queue("popAll", "check 019b7f07"),
      queue("enqueue", "check 019b7f07 and event_msg type"),
      reply("Still reading.", "a-2"),
      // Handed to the model mid-turn (2.0.76 names nothing on removal): no user record follows.
      queue("remove"),
      reply("Checking 019b7f07 too.", "a-3"),
      // Queued, then sent as the next prompt: its user record carries it.
      queue("enqueue", "now write the spec"),
      queue("dequeue"),
      typed("now write the spec", "u-2"),
      reply("Writing.", "a-4"),
      // 2.1.x: the removal names the text and a queued_command attachment repeats it.
      queue("enqueue", "and add tests"),
      queue("remove", "and add tests"),
      JSON.stringify({
        type: "attachment",
        attachment: {
          type: "queued_command",
          prompt: "and add tests",
          commandMode: "prompt",
          origin: { kind: "human" },
        },
        timestamp: at(),
        sessionId: SESSION,
      }),
      // A background task's notification goes through the same queue: not something a human typed.
      queue(
        "enqueue",
        '<task-notification>\n<task-id>a30201</task-id>\n<status>failed</status>\n<summary>Agent "lint" failed</summary>\n</task-notification>',
      ),
      queue("remove"),
    ].join("\n");
    const { items, problems } = convertClaudeCodeTranscript(jsonl);
    expect(problems).toEqual([]);
    const posts = items.filter((item) => item.metadata === undefined).map((item) => item.content[0]!.text);
    expect(posts).toEqual([
      "analyze the codex folder",
      "check 019b7f07 and event_msg type",
      "now write the spec",
      "and add tests",
    ]);
    expect(
      items
        .filter((item) => statuses([item])[0] === "task_notification")
        .map((item) => item.content[0]!.text),
    ).toEqual(['Task failed: Agent "lint" failed']);
    // A message handed over mid-turn does not end the turn.
    expect(statuses(items)).toEqual([
      "post",
      "text",
      "text",
      "post",
      "text",
      "turn_end",
      "post",
      "text",
      "post",
      "task_notification",
      "turn_end",
    ]);
  });

  it("matches a queue removal to the prompt still waiting, though one queued was delivered as a plain user record (issue 33)", () => {
    // Claude Code 2.1.38 with subagents: a queued notification is delivered as a `user` record of
    // its own, with no `dequeue` line; the removals after it name nothing.
    const queue = (operation: string, content?: string) =>
      JSON.stringify({
        type: "queue-operation",
        operation,
        timestamp: at(),
        sessionId: SESSION,
        ...(content === undefined ? {} : { content }),
      });
    const notification =
      '<task-notification>\n<task-id>a4f2c91</task-id>\n<status>completed</status>\n<summary>Agent "Explore" completed</summary>\n</task-notification>';
    const jsonl = [
      typed("map the repository", "u-1", { version: "2.1.38" }),
      reply("Starting two agents.", "a-1"),
      queue("enqueue", notification),
      // Delivered as the next prompt, without a dequeue line.
      typed(notification, "u-2", { version: "2.1.38" }),
      reply("The explorer is done.", "a-2"),
      queue("enqueue", "also list the scripts"),
      reply("Reading package.json.", "a-3"),
      queue("remove"),
      reply("Listing the scripts.", "a-4"),
      queue("enqueue", "and the test command"),
      queue("remove"),
      reply("The test command is vitest.", "a-5"),
      line({ type: "system", subtype: "turn_duration", durationMs: 900, uuid: "s-end", timestamp: at() }),
    ].join("\n");
    const { items, problems } = convertClaudeCodeTranscript(jsonl);
    expect(problems).toEqual([]);
    expect(briefs(items.filter((item) => item.metadata === undefined))).toEqual([
      "map the repository",
      "also list the scripts",
      "and the test command",
    ]);
    expect(
      items
        .filter((item) => statuses([item])[0] === "task_notification")
        .map((item) => item.content[0]!.text),
    ).toEqual(['Task completed: Agent "Explore" completed']);
    // Each post sits where it was handed to the model, between the replies around its removal.
    const order = items
      .filter((item) => item.metadata === undefined || item.metadata.type === "text")
      .map((item) => item.content[0]!.text);
    expect(order).toEqual([
      "map the repository",
      "Starting two agents.",
      "The explorer is done.",
      "Reading package.json.",
      "also list the scripts",
      "Listing the scripts.",
      "and the test command",
      "The test command is vitest.",
    ]);
  });

  it("sizes an image whose data is a blob ref from what the tool reported, never from the ref (defect 7)", () => {
    const ref = `blob:sha256:${"ab".repeat(32)}`;
    const readImage = (uuid: string, toolUseResult?: unknown) =>
      record({
        type: "user",
        message: {
          role: "user",
          content: [
            {
              tool_use_id: `toolu_${uuid}`,
              type: "tool_result",
              content: [{ type: "image", source: { type: "base64", data: ref, media_type: "image/png" } }],
            },
          ],
        },
        uuid,
        timestamp: at(),
        ...(toolUseResult === undefined ? {} : { toolUseResult }),
      });
    const { items } = convertClaudeCodeTranscript(
      [
        readImage("r1", { type: "image", file: { base64: ref, type: "image/png", originalSize: 48213 } }),
        readImage("r2"),
        typed(
          [
            { type: "text", text: "this one" },
            { type: "image", source: { type: "base64", media_type: "image/jpeg", data: ref } },
          ],
          "u-paste",
        ),
      ].join("\n"),
    );
    const shown = items.filter((item) => item.metadata?.type !== "turn_end");
    expect(
      shown.map(
        (item) =>
          (item.metadata as { tool?: { output: string } } | undefined)?.tool?.output ?? item.content[0]!.text,
      ),
    ).toEqual([
      `[image: image/png, 48,213 bytes, ${ref}]`,
      `[image: image/png, ${ref}]`,
      `this one\n[image: image/jpeg, ${ref}]`,
    ]);
  });

  it("keeps a subagent's own figures from toolUseResult on its tool_result", () => {
    const jsonl = record({
      type: "user",
      message: {
        role: "user",
        content: [
          {
            tool_use_id: "toolu_task",
            type: "tool_result",
            content: [{ type: "text", text: "Overview: …" }],
          },
        ],
      },
      uuid: "r-task",
      timestamp: at(),
      toolUseResult: {
        status: "completed",
        prompt: "Explore the repository",
        agentId: "a693a87",
        content: [{ type: "text", text: "Overview: …" }],
        totalDurationMs: 141146,
        totalTokens: 88094,
        totalToolUseCount: 27,
        usage: {
          input_tokens: 408,
          cache_creation_input_tokens: 12534,
          cache_read_input_tokens: 70073,
          output_tokens: 5079,
        },
      },
    });
    const { items } = convertClaudeCodeTranscript(jsonl);
    expect(items[0]!.metadata).toEqual({
      type: "tool_result",
      tool: {
        invocation_id: "toolu_task",
        is_error: false,
        output: "Overview: …",
        subagent: {
          agent_id: "a693a87",
          status: "completed",
          total_tokens: 88094,
          tool_uses: 27,
          duration_ms: 141146,
        },
      },
    });
  });

  it("reports a failed stop hook, and keeps one tool_result per call when a line repeats", () => {
    const result = record({
      type: "user",
      message: { role: "user", content: [{ tool_use_id: "toolu_1", type: "tool_result", content: "ok" }] },
      uuid: "r-1",
      timestamp: at(),
    });
    const jsonl = [
      result,
      result,
      record({
        type: "system",
        subtype: "stop_hook_summary",
        hookCount: 1,
        hookInfos: [{ command: "codemie hook" }],
        hookErrors: ["codemie hook: exit code 1"],
        preventedContinuation: false,
        uuid: "s-hook",
        timestamp: at(),
      }),
    ].join("\n");
    const { items, problems } = convertClaudeCodeTranscript(jsonl);
    expect(statuses(items)).toEqual(["tool_result", "hook_failed", "turn_end"]);
    expect(problems).toEqual([{ line: 2, message: expect.stringContaining("toolu_1") }]);
  });
});
