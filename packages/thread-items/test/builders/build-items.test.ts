import { sanitizeText } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { THINKING_BRIEF_CHARS } from "../../src/builders/brief-text.js";
import {
  pendingPromptItem,
  pendingPromptResolvedItem,
  plainPostItem,
  statusItem,
  textItem,
  thinkingItem,
  toolCallItem,
  toolCallItemOfJson,
  toolResultItem,
  turnEndItem,
} from "../../src/builders/build-items.js";
import { isThreadItem } from "../../src/schema/parse-thread-item.js";

const brief = (item: { content: { text: string }[] }) => item.content[0]!.text;

describe("tool call briefs", () => {
  it.each([
    ["Bash", { command: "npm test", description: "Run the test suite" }, "Bash → npm test"],
    ["Bash", { command: "set -e\nnpm ci\nnpm test" }, "Bash → set -e"],
    ["Read", { file_path: "/repo/src/parser.ts", offset: 10 }, "Read → /repo/src/parser.ts"],
    ["Write", { file_path: "notes.md", content: "x".repeat(5000) }, "Write → notes.md"],
    ["Edit", { file_path: "src/a.ts", old_string: "a", new_string: "b" }, "Edit → src/a.ts"],
    ["Glob", { pattern: "**/*.ts", path: "src" }, "Glob → **/*.ts in src"],
    ["Grep", { pattern: "parseToken", path: "src", output_mode: "content" }, "Grep → parseToken in src"],
    ["Grep", { pattern: "TODO" }, "Grep → TODO"],
    ["WebFetch", { url: "https://example.com/a", prompt: "summarize" }, "WebFetch → https://example.com/a"],
    ["WebSearch", { query: "vitest 4 pool forks" }, "WebSearch → vitest 4 pool forks"],
    ["Task", { description: "Find callers", prompt: "…", subagent_type: "Explore" }, "Task → Find callers"],
    ["TodoWrite", { todos: [{}, {}, {}] }, "TodoWrite → 3 todos"],
    [
      "AskUserQuestion",
      { questions: [{ question: "Which database?", options: [] }] },
      "AskUserQuestion → Which database?",
    ],
    ["shell", { command: ["bash", "-lc", "npm test"], workdir: "/repo" }, "shell → npm test"],
    ["shell", { command: ["git", "status", "--short"] }, "shell → git status --short"],
    ["exec_command", { cmd: "cargo build" }, "exec_command → cargo build"],
    [
      "apply_patch",
      "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** Add File: b.ts\n+x\n*** End Patch",
      "apply_patch → src/a.ts (+1 more)",
    ],
    ["update_plan", { plan: [{ step: "a" }] }, "update_plan → 1 step"],
    [
      "mcp__github__create_issue",
      { title: "x", path: "owner/repo" },
      "mcp__github__create_issue → owner/repo",
    ],
    ["Mystery", { flag: true }, "Mystery"],
    ["Mystery", null, "Mystery"],
  ])("%s %j → %s", (name, input, expected) => {
    const item = toolCallItem({ name, invocationId: "tu_1", input });
    expect(brief(item)).toBe(expected);
    expect(item.metadata.tool).toEqual({ name, invocation_id: "tu_1", input });
    expect(isThreadItem(item)).toBe(true);
  });

  it("cuts a very long summary with an ellipsis", () => {
    const item = toolCallItem({
      name: "Bash",
      invocationId: "tu",
      input: { command: `echo ${"x".repeat(500)}` },
    });
    expect(brief(item).length).toBeLessThanOrEqual("Bash → ".length + 121);
    expect(brief(item).endsWith("…")).toBe(true);
  });
});

describe("tool result briefs", () => {
  it.each([
    [
      "✓ src/parser.test.ts (12 ok)\nTest Files  1 passed (1)\nTests 12 passed\n",
      "→ ✓ src/parser.test.ts (12 ok) (3 lines)",
    ],
    ["one line", "→ one line (1 line)"],
    ["\n\n  first real line  \nsecond", "→ first real line (4 lines)"],
    ["", "→ (no output)"],
  ])("%j → %s", (output, expected) => {
    const item = toolResultItem({ invocationId: "tu_1", output });
    expect(brief(item)).toBe(expected);
    expect(item.metadata.tool).toEqual({ invocation_id: "tu_1", is_error: false, output });
    expect("name" in item.metadata.tool).toBe(false);
  });

  it("counts the lines of a 20 MB output", () => {
    const output = "line\n".repeat(4_000_000);
    expect(brief(toolResultItem({ invocationId: "tu", output }))).toBe("→ line (4000000 lines)");
  });

  it("keeps is_error", () => {
    expect(toolResultItem({ invocationId: "tu", output: "boom", isError: true }).metadata.tool.is_error).toBe(
      true,
    );
  });
});

describe("other builders", () => {
  it("text: the whole text is the brief; metadata holds only the type", () => {
    expect(textItem("Looks fine.")).toEqual({
      content: [{ type: "text", text: "Looks fine." }],
      metadata: { type: "text" },
    });
  });

  it("thinking: [thinking] + about 120 characters, full text and its length in code points", () => {
    const text = `Considering 😀 the   request\n\nand ${"more reasoning ".repeat(40)}`;
    const item = thinkingItem(text);
    expect(brief(item).startsWith("[thinking] Considering 😀 the request and more")).toBe(true);
    expect(brief(item).length).toBeLessThanOrEqual("[thinking] ".length + THINKING_BRIEF_CHARS + 1);
    expect(brief(item).endsWith("…")).toBe(true);
    expect(item.metadata).toEqual({ type: "thinking", text, full_text_length: [...text].length });
  });

  it("thinking: a short thought is shown whole", () => {
    expect(brief(thinkingItem("Short."))).toBe("[thinking] Short.");
  });

  it("status: a machine token, a detail, and a readable brief", () => {
    const item = statusItem({ status: "compacting_context", detail: "Reducing 38k → 12k tokens" });
    expect(item.metadata).toEqual({
      type: "status",
      status: "compacting_context",
      detail: "Reducing 38k → 12k tokens",
    });
    expect(brief(item)).toBe("Compacting context: Reducing 38k → 12k tokens");
    expect(brief(statusItem({ status: "compacting_context", brief: "Compacting context..." }))).toBe(
      "Compacting context...",
    );
  });

  it("turn_end: the four figures", () => {
    const item = turnEndItem({
      inputTokens: 12480,
      inputTokensCached: 9600,
      outputTokens: 1322,
      durationMs: 8421,
    });
    expect(item.metadata.stats).toEqual({
      input_tokens: 12480,
      input_tokens_cached: 9600,
      output_tokens: 1322,
      duration_ms: 8421,
    });
    expect(brief(item)).toBe("Turn complete");
    expect(
      turnEndItem({ inputTokens: 1, inputTokensCached: 0, outputTokens: 0, durationMs: null }).metadata.stats
        .duration_ms,
    ).toBeNull();
  });

  it("turn_end: figures the source did not record are null, and cached ≤ input is checked only when both are known", () => {
    const unknown = turnEndItem({
      inputTokens: null,
      inputTokensCached: null,
      outputTokens: null,
      durationMs: 900,
    });
    expect(unknown.metadata.stats).toEqual({
      input_tokens: null,
      input_tokens_cached: null,
      output_tokens: null,
      duration_ms: 900,
    });
    expect(isThreadItem(unknown)).toBe(true);
    expect(
      turnEndItem({ inputTokens: null, inputTokensCached: 50, outputTokens: 2, durationMs: null }).metadata
        .stats,
    ).toEqual({ input_tokens: null, input_tokens_cached: 50, output_tokens: 2, duration_ms: null });
  });

  it("pending_prompt: one brief per kind, the full payload kept", () => {
    const approval = {
      kind: "approval" as const,
      tool_name: "Bash",
      input: { command: "rm -rf build" },
      invocation_id: "tu_9",
    };
    expect(brief(pendingPromptItem({ promptId: "p1", prompt: approval }))).toBe(
      "Approval needed: Bash → rm -rf build",
    );
    expect(pendingPromptItem({ promptId: "p1", prompt: approval }).metadata.prompt).toBe(approval);
    expect(
      brief(
        pendingPromptItem({ promptId: "p2", prompt: { kind: "text", text: "Which branch?\nmain or dev" } }),
      ),
    ).toBe("Waiting for input: Which branch?");
    const questions = [
      {
        question: "Which database?",
        header: "DB",
        options: [{ label: "Postgres" }, { label: "SQLite" }],
        multiSelect: false,
      },
      { question: "Add tests?", options: [{ label: "Yes" }] },
    ];
    expect(
      brief(pendingPromptItem({ promptId: "p3", prompt: { kind: "ask_user_question", questions } })),
    ).toBe("Question: Which database? (+1 more)");
  });

  it("pending_prompt_resolved: an approval is granted only when answered with approval", () => {
    const resolve = (outcome: "answered" | "cancelled" | "failed", approved?: boolean) =>
      pendingPromptResolvedItem({
        promptId: "p1",
        kind: "approval",
        outcome,
        ...(approved === undefined ? {} : { approved }),
      });
    expect(resolve("answered", true).metadata.approved).toBe(true);
    expect(brief(resolve("answered", true))).toBe("Approved");
    expect(resolve("answered", false).metadata.approved).toBe(false);
    expect(resolve("answered").metadata.approved).toBe(false);
    expect(resolve("cancelled", true).metadata.approved).toBe(false);
    expect(resolve("failed", true).metadata.approved).toBe(false);
    expect(brief(resolve("failed"))).toBe("Denied");
    const answered = pendingPromptResolvedItem({
      promptId: "p2",
      kind: "text",
      outcome: "answered",
      response: "main",
    });
    expect(answered.metadata).toEqual({
      type: "pending_prompt_resolved",
      prompt_id: "p2",
      kind: "text",
      outcome: "answered",
      response: "main",
    });
    expect(brief(answered)).toBe("Prompt answered");
  });

  it("plain post: no metadata at all", () => {
    expect(plainPostItem("hi", { id: "m-1" })).toEqual({
      id: "m-1",
      content: [{ type: "text", text: "hi" }],
    });
  });

  it("every builder's item matches the schema", () => {
    const items = [
      textItem("a"),
      toolCallItem({ name: "Bash", invocationId: "t", input: { command: "ls" } }),
      toolResultItem({ invocationId: "t", output: "x" }),
      thinkingItem("t"),
      statusItem({ status: "compacting_context" }),
      turnEndItem({ inputTokens: 1, inputTokensCached: 1, outputTokens: 1, durationMs: 1 }),
      pendingPromptItem({ promptId: "p", prompt: { kind: "text", text: "?" } }),
      pendingPromptResolvedItem({ promptId: "p", kind: "ask_user_question", outcome: "cancelled" }),
      plainPostItem("x"),
    ];
    for (const item of items) expect(isThreadItem(item)).toBe(true);
  });
});

describe("briefs and tool outputs are sanitized (issue 15, item 6)", () => {
  const ESC = "\u001b";
  // Written by hand from ECMA-48: what a terminal shows, without its controls.
  const colored = `${ESC}[1;31mFAIL${ESC}[0m a.test.ts\u0000\r\n${ESC}]0;title\u0007done\u0007\n`;
  const shown = "FAIL a.test.ts\ndone\n";

  it("a tool result's output and brief hold the text, not the escape sequences and control bytes", () => {
    const item = toolResultItem({ invocationId: "t", output: colored, isError: true });
    expect(item.metadata.tool.output).toBe(shown);
    expect(brief(item)).toBe("→ FAIL a.test.ts (2 lines)");
  });

  it("every other brief too: calls, status details, text, posts", () => {
    expect(
      brief(toolCallItem({ name: "Bash", invocationId: "t", input: { command: `echo ${ESC}[31mx` } })),
    ).toBe("Bash → echo x");
    expect(brief(statusItem({ status: "api_retry", detail: `rate limited\u0007${ESC}[K` }))).toBe(
      "Api retry: rate limited",
    );
    expect(brief(textItem(`done\u009b0m\r\n`))).toBe("done\n");
    expect(brief(plainPostItem(`hi${ESC}[2J\u0000`))).toBe("hi");
  });

  it("a sequence cut off at the end of a piece never eats the text the brief puts after it", () => {
    const question = pendingPromptItem({
      promptId: "p",
      prompt: {
        kind: "ask_user_question",
        questions: [{ question: `Which one?${ESC}[` }, { question: "Second?" }],
      },
    });
    expect(brief(question)).toBe("Question: Which one? (+1 more)");
  });

  it("metadata too: a tool call's name and input (keys included), thinking text and its length, prompts, details", () => {
    const call = toolCallItem({
      name: `Bash\u0007`,
      invocationId: "t",
      input: { [`cmd${ESC}[0m`]: `rm ${ESC}]0;x\u0007-rf build`, env: [`A=\u202e1`] },
    });
    expect(call.metadata.tool).toEqual({
      name: "Bash",
      invocation_id: "t",
      input: { cmd: "rm -rf build", env: ["A=1"] },
    });
    const thinking = thinkingItem(`weigh${ESC}[2m it\u0000\u{e0041}`);
    expect(thinking.metadata).toEqual({ type: "thinking", text: "weigh it", full_text_length: 8 });
    const prompt = pendingPromptItem({
      promptId: "p",
      prompt: { kind: "approval", tool_name: "Bash", input: { command: `ls${ESC}[K` }, message: "ok?\u0007" },
    });
    expect(prompt.metadata.prompt).toEqual({
      kind: "approval",
      tool_name: "Bash",
      input: { command: "ls" },
      message: "ok?",
    });
    const resolved = pendingPromptResolvedItem({
      promptId: "p",
      kind: "text",
      outcome: "answered",
      response: { text: `yes${ESC}[1m` },
      detail: "d\u200b",
    });
    expect(resolved.metadata).toMatchObject({ response: { text: "yes" }, detail: "d" });
    expect(statusItem({ status: "api_retry", detail: "x\u0007" }).metadata.detail).toBe("x");
  });

  it("text without controls is kept as it is", () => {
    const plain = "naïve 日本語 😀\tcol\nline";
    expect(toolResultItem({ invocationId: "t", output: plain }).metadata.tool.output).toBe(plain);
    expect(brief(textItem(plain))).toBe(plain);
  });

  // Builders join pieces they cleaned into a brief without scanning it again: each raw place a
  // hostile string can go, and the brief must still be one sanitizeText leaves as it is.
  const HOSTILE = [
    `${ESC}]0;title`,
    `${ESC}[`,
    "x\u009b",
    "a\r\nb\u0000",
    "\u202eevil\u2066",
    "\ufe0f\ufe0fvs",
    "cut \ud83d",
    "\udc00lone",
    `${" ".repeat(477)}ab😀`,
  ];
  it.each(HOSTILE)("a brief with %j in each raw place is already clean", (hostile) => {
    const items = [
      toolCallItem({ name: `Bash${hostile}`, invocationId: "t", input: { command: `${hostile} ls` } }),
      toolCallItem({ name: hostile, invocationId: "t", input: { pattern: hostile, path: hostile } }),
      toolCallItem({ name: "apply_patch", invocationId: "t", input: `*** Update File: ${hostile}\n` }),
      toolCallItem({ name: "shell", invocationId: "t", input: { command: ["bash", "-lc", hostile] } }),
      toolResultItem({ invocationId: "t", output: `${hostile}\nmore` }),
      thinkingItem(`${hostile} then ${hostile}`),
      textItem(hostile),
      statusItem({ status: "api_retry", detail: hostile }),
      statusItem({ status: "api_retry", brief: `Retry ${hostile}`, detail: hostile }),
      pendingPromptItem({ promptId: "p", prompt: { kind: "approval", tool_name: hostile, input: {} } }),
      pendingPromptItem({ promptId: "p", prompt: { kind: "text", text: hostile } }),
      pendingPromptResolvedItem({ promptId: "p", kind: "text", outcome: "failed", detail: hostile }),
    ];
    for (const item of items) expect(brief(item)).toBe(sanitizeText(brief(item)));
  });
});

describe("a tool call from JSON text is sanitized exactly as from the value", () => {
  // Hand-written arguments as an agent writes them: the text as given, the value parsed from it.
  it.each<[string, string]>([
    ["clean", '{"command":["bash","-lc","ls -la"],"workdir":"/repo"}'],
    ["an escaped ESC sequence", '{"cmd":"printf \\u001b[31mred\\u001b[0m"}'],
    ["an escaped carriage return", '{"cmd":"a\\rb"}'],
    ["an escaped backspace and form feed", '{"cmd":"a\\bb\\fc"}'],
    ["a raw zero width space", '{"cmd":"rm\u200b -rf"}'],
    ["a raw bidi override in a key", '{"c\u202emd":"x"}'],
    ["an escaped backslash before u (not an escape of u)", '{"path":"C:\\\\users"}'],
    ["a raw C1 control", '{"keys":"y\u009b"}'],
    ["newlines and tabs kept", '{"patch":"a\\n\\tb"}'],
  ])("%s", (_, json) => {
    const input = JSON.parse(json) as unknown;
    const fromJson = toolCallItemOfJson({ name: "shell", invocationId: "call_1", input, json });
    expect(fromJson).toEqual(toolCallItem({ name: "shell", invocationId: "call_1", input }));
    expect(isThreadItem(fromJson)).toBe(true);
  });

  it("keeps a clean value as it is, without a copy", () => {
    const json = '{"command":["bash","-lc","ls"]}';
    const input = JSON.parse(json) as unknown;
    expect(
      toolCallItemOfJson({ name: "shell", invocationId: "call_1", input, json }).metadata.tool.input,
    ).toBe(input);
  });
});

describe("builders reject bad input with INVALID_INPUT", () => {
  it.each<[string, () => unknown]>([
    ["text that is not a string", () => textItem(42 as unknown as string)],
    ["a tool call without a name", () => toolCallItem({ name: "", invocationId: "t", input: {} })],
    [
      "a tool call without an invocation id",
      () => toolCallItem({ name: "Bash", invocationId: undefined as unknown as string, input: {} }),
    ],
    [
      "a tool result whose output is an object",
      () => toolResultItem({ invocationId: "t", output: {} as unknown as string }),
    ],
    [
      "a tool result whose isError is a string",
      () => toolResultItem({ invocationId: "t", output: "", isError: "no" as unknown as boolean }),
    ],
    ["a hostile item id", () => textItem("x", { id: "../../etc/passwd" })],
    ["an item id with NUL", () => textItem("x", { id: "a\u0000" })],
    ["a status token with spaces", () => statusItem({ status: "Compacting context" })],
    ["a status token with a path", () => statusItem({ status: "../x" })],
    [
      "negative tokens",
      () => turnEndItem({ inputTokens: -1, inputTokensCached: 0, outputTokens: 0, durationMs: 0 }),
    ],
    [
      "NaN duration",
      () => turnEndItem({ inputTokens: 1, inputTokensCached: 0, outputTokens: 0, durationMs: Number.NaN }),
    ],
    [
      "more cached than total",
      () => turnEndItem({ inputTokens: 1, inputTokensCached: 2, outputTokens: 0, durationMs: 0 }),
    ],
    [
      "an absent token figure (unknown is null, not undefined)",
      () =>
        turnEndItem({
          inputTokens: undefined as unknown as null,
          inputTokensCached: 0,
          outputTokens: 0,
          durationMs: 0,
        }),
    ],
    [
      "a prompt of unknown kind",
      () => pendingPromptItem({ promptId: "p", prompt: { kind: "voice" } as never }),
    ],
    [
      "an approval without a tool",
      () => pendingPromptItem({ promptId: "p", prompt: { kind: "approval" } as never }),
    ],
    [
      "a resolution with an unknown outcome",
      () => pendingPromptResolvedItem({ promptId: "p", kind: "text", outcome: "ignored" as never }),
    ],
    [
      "a resolution with an unknown kind",
      () => pendingPromptResolvedItem({ promptId: "p", kind: "voice" as never, outcome: "answered" }),
    ],
  ])("%s", async (_, build) => {
    await expectStowageError(build, "INVALID_INPUT");
  });
});
