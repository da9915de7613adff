import { describe, expect, it } from "vitest";
import { createPiSessionConverter } from "../../src/adapters/pi-session.js";
import { isThreadItem } from "../../src/schema/parse-thread-item.js";
import type { ThreadItem } from "../../src/schema/thread-item-schema.js";
import { convertPiSession } from "../support/convert-whole.js";

const SESSION = "ffae836b-9420-4060-ac13-7745215f90ff";
const usage = (input: number, cacheRead: number, cacheWrite: number, output: number) => ({
  input,
  output,
  cacheRead,
  cacheWrite,
  totalTokens: input + cacheRead + cacheWrite + output,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const entry = (timestamp: string, message: Record<string, unknown>, id?: string, parentId?: string | null) =>
  JSON.stringify({
    type: "message",
    ...(id === undefined ? {} : { id, parentId: parentId ?? null }),
    timestamp,
    message: { ...message, timestamp: Date.parse(timestamp) },
  });
const assistant = (
  timestamp: string,
  content: unknown[],
  stopReason: string,
  extra: Record<string, unknown> = {},
  id?: string,
) =>
  entry(
    timestamp,
    {
      role: "assistant",
      content,
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-opus-4-5",
      usage: usage(10, 40000, 2000, 150),
      stopReason,
      ...extra,
    },
    id,
  );
const kinds = (items: ThreadItem[]) =>
  items.map(
    (item) => (item.metadata as { status?: string } | undefined)?.status ?? item.metadata?.type ?? "post",
  );

describe("convertPiSession", () => {
  it("turns a version 1 session (as pi wrote them in 2025) into posts, calls, results and turns", () => {
    const jsonl = [
      JSON.stringify({
        type: "session",
        id: SESSION,
        timestamp: "2025-12-09T00:53:29.825Z",
        cwd: "/Users/badlogic/workspaces/pi-mono",
        provider: "anthropic",
        modelId: "claude-opus-4-5",
        thinkingLevel: "off",
      }),
      entry("2025-12-08T22:41:05.306Z", {
        role: "user",
        content: [{ type: "text", text: "read main.ts and plan a refactor" }],
      }),
      assistant(
        "2025-12-08T22:41:09.389Z",
        [
          { type: "thinking", thinking: "Read the file first.", thinkingSignature: "EoECCkYIChgC" },
          {
            type: "toolCall",
            id: "toolu_012yuiPP1VAfh196GXaAmT8D",
            name: "read",
            arguments: { path: "packages/coding-agent/src/main.ts" },
          },
        ],
        "toolUse",
      ),
      entry("2025-12-08T22:41:09.394Z", {
        role: "toolResult",
        toolCallId: "toolu_012yuiPP1VAfh196GXaAmT8D",
        toolName: "read",
        content: [{ type: "text", text: 'import { Agent } from "@mariozechner/pi-agent-core";\nexport {};' }],
        isError: false,
      }),
      JSON.stringify({
        type: "thinking_level_change",
        timestamp: "2025-12-08T22:45:42.397Z",
        thinkingLevel: "minimal",
      }),
      assistant("2025-12-08T22:42:00.888Z", [{ type: "text", text: "Here is the plan." }], "stop"),
    ].join("\n");
    const { items, problems, sessionId } = convertPiSession(jsonl);
    expect(problems).toEqual([]);
    expect(sessionId).toBe(SESSION);
    expect(kinds(items)).toEqual([
      "session_started",
      "post",
      "thinking",
      "tool_call",
      "tool_result",
      "text",
      "turn_end",
    ]);
    expect(items.map((item) => item.content[0]!.text)).toEqual([
      "Session started",
      "read main.ts and plan a refactor",
      "[thinking] Read the file first.",
      "read → packages/coding-agent/src/main.ts",
      '→ import { Agent } from "@mariozechner/pi-agent-core"; (2 lines)',
      "Here is the plan.",
      "Turn complete",
    ]);
    expect(items[0]!.metadata).toEqual({
      type: "status",
      status: "session_started",
      detail: "model anthropic/claude-opus-4-5",
    });
    // Two model calls, each 10 uncached + 40,000 cache reads + 2,000 cache writes in, 150 out;
    // from the prompt (22:41:05.306) to the last reply (22:42:00.888).
    expect(items.at(-1)!.metadata).toEqual({
      type: "turn_end",
      stats: { input_tokens: 84020, input_tokens_cached: 80000, output_tokens: 300, duration_ms: 55582 },
    });
    for (const item of items) expect(isThreadItem(item)).toBe(true);
  });

  it("reads version 3 entries: ids, compaction, branch summaries, extension messages, model changes, ! commands", () => {
    const jsonl = [
      JSON.stringify({
        type: "session",
        version: 3,
        id: SESSION,
        timestamp: "2026-01-10T09:00:00.000Z",
        cwd: "/repo",
      }),
      entry("2026-01-10T09:00:01.000Z", { role: "user", content: "list the files" }, "a1b2c3d4", null),
      assistant(
        "2026-01-10T09:00:02.000Z",
        [
          { type: "text", text: "Running ls." },
          { type: "toolCall", id: "call_1", name: "bash", arguments: { command: "ls" } },
        ],
        "toolUse",
        {},
        "b2c3d4e5",
      ),
      entry(
        "2026-01-10T09:00:03.000Z",
        {
          role: "toolResult",
          toolCallId: "call_1",
          toolName: "bash",
          content: [{ type: "text", text: "README.md\nsrc" }],
          isError: false,
        },
        "c3d4e5f6",
        "b2c3d4e5",
      ),
      assistant("2026-01-10T09:00:04.000Z", [{ type: "text", text: "Two entries." }], "stop", {}, "d4e5f6a7"),
      entry(
        "2026-01-10T09:01:00.000Z",
        {
          role: "bashExecution",
          command: "git status",
          output: "clean\n",
          exitCode: 0,
          cancelled: false,
          truncated: false,
        },
        "e5f6a7b8",
      ),
      JSON.stringify({
        type: "model_change",
        id: "f6a7b8c9",
        parentId: "e5f6a7b8",
        timestamp: "2026-01-10T09:02:00.000Z",
        provider: "openai",
        modelId: "gpt-5.1-codex",
      }),
      JSON.stringify({
        type: "compaction",
        id: "a7b8c9d0",
        parentId: "f6a7b8c9",
        timestamp: "2026-01-10T09:03:00.000Z",
        summary: "User listed files.",
        firstKeptEntryId: "c3d4e5f6",
        tokensBefore: 50000,
      }),
      JSON.stringify({
        type: "branch_summary",
        id: "b8c9d0e1",
        parentId: "a1b2c3d4",
        timestamp: "2026-01-10T09:04:00.000Z",
        fromId: "a7b8c9d0",
        summary: "Tried listing with find.",
      }),
      JSON.stringify({
        type: "custom_message",
        id: "c9d0e1f2",
        parentId: "b8c9d0e1",
        timestamp: "2026-01-10T09:05:00.000Z",
        customType: "todo-reminder",
        content: "3 todos open",
        display: true,
      }),
      JSON.stringify({
        type: "custom",
        id: "d0e1f2a3",
        parentId: "c9d0e1f2",
        timestamp: "2026-01-10T09:05:01.000Z",
        customType: "todo",
        data: { count: 3 },
      }),
      JSON.stringify({
        type: "label",
        id: "e1f2a3b4",
        parentId: "d0e1f2a3",
        timestamp: "2026-01-10T09:05:02.000Z",
        targetId: "a1b2c3d4",
        label: "start",
      }),
      JSON.stringify({
        type: "session_info",
        id: "f2a3b4c5",
        parentId: "e1f2a3b4",
        timestamp: "2026-01-10T09:05:03.000Z",
        name: "Listing",
      }),
    ].join("\n");
    const { items, problems } = convertPiSession(jsonl);
    expect(problems).toEqual([]);
    expect(items.map((item) => [kinds([item])[0], item.id, item.content[0]!.text])).toEqual([
      ["session_started", undefined, "Session started"],
      ["post", "a1b2c3d4", "list the files"],
      ["text", "b2c3d4e5:0", "Running ls."],
      ["tool_call", "b2c3d4e5:1", "bash → ls"],
      ["tool_result", "c3d4e5f6", "→ README.md (2 lines)"],
      ["text", "d4e5f6a7", "Two entries."],
      ["turn_end", undefined, "Turn complete"],
      ["user_shell_command", "e5f6a7b8", "! git status"],
      ["model_changed", "f6a7b8c9", "Model: openai/gpt-5.1-codex"],
      ["context_compacted", "a7b8c9d0", "Context compacted"],
      ["branch_summary", "b8c9d0e1", "Branch summary"],
      ["custom_message", "c9d0e1f2", "Extension message: todo-reminder"],
    ]);
    expect(items[7]!.metadata).toEqual({
      type: "status",
      status: "user_shell_command",
      detail: "$ git status\nclean\nexit code 0",
    });
    expect(items[9]!.metadata).toMatchObject({ detail: "compaction at 50,000 tokens" });
  });

  it("reports aborted and failed model calls as statuses, ends the turn there, and shows images as placeholders", () => {
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAfbLI3wAAAABJRU5ErkJggg==";
    const jsonl = [
      entry("2025-11-20T23:33:01.550Z", { role: "user", content: [{ type: "text", text: "/mode" }] }),
      assistant("2025-11-20T23:33:02.351Z", [], "aborted", {
        usage: usage(0, 0, 0, 0),
        errorMessage: "Request was aborted",
      }),
      entry("2025-11-20T23:34:00.000Z", {
        role: "user",
        content: [
          { type: "text", text: "what is wrong here?" },
          { type: "image", data: png, mimeType: "image/png" },
        ],
      }),
      assistant("2025-11-20T23:34:05.000Z", [], "error", { errorMessage: "529 overloaded_error" }),
    ].join("\n");
    const { items } = convertPiSession(jsonl);
    expect(items.map((item) => [kinds([item])[0], item.content[0]!.text])).toEqual([
      ["post", "/mode"],
      ["interrupted", "Interrupted by the user"],
      ["turn_end", "Turn complete"],
      ["post", "what is wrong here?\n[image: image/png, 70 bytes]"],
      ["api_error", "Api error: 529 overloaded_error"],
      ["turn_end", "Turn complete"],
    ]);
  });

  it("reports broken entries with their line numbers and goes on, the same fed line by line", () => {
    const lines = [
      entry("2026-01-10T09:00:01.000Z", { role: "user", content: "hi" }),
      JSON.stringify({ type: "message" }),
      JSON.stringify({ type: "message", message: { role: "toolResult", content: [] } }),
      JSON.stringify({
        type: "message",
        message: { role: "assistant", content: "not blocks", stopReason: "stop" },
      }),
      JSON.stringify({
        type: "message",
        message: { role: "assistant", content: [{ type: "toolCall", name: "bash" }], stopReason: "toolUse" },
      }),
      JSON.stringify({ id: "no type" }),
      "{",
      assistant("2026-01-10T09:00:02.000Z", [{ type: "text", text: "hello" }], "stop"),
    ];
    const whole = convertPiSession(lines.join("\n"));
    expect(whole.problems.map((problem) => problem.line)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(kinds(whole.items)).toEqual(["post", "text", "turn_end"]);
    const converter = createPiSessionConverter();
    expect([...lines.flatMap((each) => converter.push(each)), ...converter.end()]).toEqual(whole.items);
  });
});
