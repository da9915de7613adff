import { countTokensExact } from "@stowage/hot-state";
import { mainThreadCpuMs, realTranscripts } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import {
  conversationHistory,
  plainPostItem,
  statusItem,
  type ThreadItem,
  textItem,
  thinkingItem,
  toolCallItem,
  toolResultItem,
} from "../../src/index.js";
import { convertClaudeCodeTranscript, convertCodexRollout } from "../support/convert-whole.js";

const real = realTranscripts("conversation history of real transcripts");

/** A conversation of `turns` user/assistant exchanges, each numbered. */
function exchanges(turns: number): ThreadItem[] {
  const items: ThreadItem[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    items.push(plainPostItem(`question ${turn}`), textItem(`answer ${turn}`));
  }
  return items;
}

describe("conversationHistory: hand-written items", () => {
  it("keeps user posts and the agent's text in order, folds a tool pair into one line, leaves reasoning and status out", () => {
    const items: ThreadItem[] = [
      plainPostItem("Run the tests please"),
      thinkingItem("The user wants the tests run; npm test it is."),
      toolCallItem({ name: "Bash", invocationId: "toolu_1", input: { command: "npm test" } }),
      statusItem({ status: "compacting_context" }),
      toolResultItem({ invocationId: "toolu_1", output: "ok 12 passed\nall done\n" }),
      toolCallItem({ name: "Read", invocationId: "toolu_2", input: { file_path: "/repo/missing.ts" } }),
      toolResultItem({ invocationId: "toolu_2", output: "ENOENT: no such file", isError: true }),
      textItem("All 12 tests pass."),
    ];
    const history = conversationHistory(items);
    expect(history.messages).toEqual([
      { role: "user", kind: "text", text: "Run the tests please" },
      { role: "assistant", kind: "tool", text: "Bash → npm test → ok 12 passed (2 lines)" },
      {
        role: "assistant",
        kind: "tool",
        text: "Read → /repo/missing.ts → ENOENT: no such file (1 line) [error]",
      },
      { role: "assistant", kind: "text", text: "All 12 tests pass." },
    ]);
    expect(history.total).toBe(4);
    expect(history.omitted).toBe(0);
    expect(history.tokens).toBeUndefined();
    expect(history.text).toBe(
      [
        "Earlier conversation (all 4 messages), oldest first:",
        "User:\nRun the tests please",
        "Assistant (tool): Bash → npm test → ok 12 passed (2 lines)",
        "Assistant (tool): Read → /repo/missing.ts → ENOENT: no such file (1 line) [error]",
        "Assistant:\nAll 12 tests pass.",
      ].join("\n\n"),
    );
    expect(history.text).not.toContain("npm test it is");
  });

  it("keeps the last 50 messages by default, and says how many older ones were left out", () => {
    const history = conversationHistory(exchanges(40)); // 80 messages
    expect(history.messages).toHaveLength(50);
    expect(history.total).toBe(80);
    expect(history.omitted).toBe(30);
    // 80 messages, the last 50 are messages 31 to 80: from the question of exchange 16 to answer 40.
    expect(history.messages[0]).toEqual({ role: "user", kind: "text", text: "question 16" });
    expect(history.messages.at(-1)).toEqual({ role: "assistant", kind: "text", text: "answer 40" });
    expect(history.text.split("\n")[0]).toBe(
      "Earlier conversation (the last 50 of 80 messages; the 30 oldest left out), oldest first:",
    );
    const three = conversationHistory(exchanges(40), { maxMessages: 3 });
    expect(three.messages.map((message) => message.text)).toEqual(["answer 39", "question 40", "answer 40"]);
  });

  it("fits a token budget counted with hot-state's o200k counter: the newest kept, the oldest dropped first", () => {
    const items = exchanges(200);
    const whole = conversationHistory(items, { maxMessages: 400, countTokens: countTokensExact });
    expect(whole.tokens).toBe(countTokensExact(whole.text));
    const budget = Math.floor((whole.tokens as number) / 4);
    const fitted = conversationHistory(items, {
      maxMessages: 400,
      budgetTokens: budget,
      countTokens: countTokensExact,
    });
    expect(fitted.tokens).toBe(countTokensExact(fitted.text));
    expect(fitted.tokens).toBeLessThanOrEqual(budget);
    expect(fitted.messages.at(-1)?.text).toBe("answer 200");
    expect(fitted.messages.length).toBeGreaterThan(20);
    expect(fitted.messages.length).toBeLessThan(400);
    expect(fitted.omitted).toBe(400 - fitted.messages.length);
    // Contiguous: the kept messages are the newest ones, none skipped between them.
    const kept = fitted.messages.map((message) => message.text);
    const all = whole.messages.map((message) => message.text);
    expect(kept).toEqual(all.slice(all.length - kept.length));
    expect(fitted.text).toContain(`the ${fitted.omitted} oldest left out`);
  });

  it("cuts the newest message in the middle when it alone is over the budget", () => {
    const words = Array.from({ length: 6000 }, (_, index) => `word${index}`).join(" ");
    const history = conversationHistory([plainPostItem("short"), plainPostItem(words)], {
      budgetTokens: 500,
      countTokens: countTokensExact,
    });
    expect(history.messages).toHaveLength(1);
    expect(history.tokens).toBeLessThanOrEqual(500);
    expect(history.messages[0]!.text.startsWith("word0 word1")).toBe(true);
    expect(history.messages[0]!.text).toMatch(/…\[\d+ characters left out\]…/);
    expect(history.messages[0]!.text.endsWith("word5999")).toBe(true);
  });

  it("an empty conversation is a history that says so", () => {
    const history = conversationHistory([statusItem({ status: "session_started" })], {
      countTokens: countTokensExact,
    });
    expect(history).toMatchObject({
      messages: [],
      total: 0,
      omitted: 0,
      text: "Earlier conversation: none was recorded.",
    });
  });
});

// "Bounded time" is this thread's CPU time (test-support's mainThreadCpuMs): a stall guard that a
// machine busy with other suites cannot trip by making the test wait for a core.
describe("conversationHistory: hostile inputs", () => {
  it("a huge message is cut to 16,000 characters; a run o200k cannot count is cut before counting", () => {
    const huge = `${"lorem ipsum ".repeat(200_000)}THE END`;
    const base64 = "A".repeat(3_000_000);
    const started = mainThreadCpuMs();
    const history = conversationHistory([plainPostItem(huge), textItem(`see ${base64} there`)], {
      budgetTokens: 20_000,
      countTokens: countTokensExact,
    });
    expect(mainThreadCpuMs() - started, "CPU ms").toBeLessThan(5_000);
    const [user, assistant] = history.messages;
    expect(user!.text.length).toBeLessThan(16_100);
    expect(user!.text.endsWith("THE END")).toBe(true);
    expect(assistant!.text).toBe(`see ${"A".repeat(200)}…[2999800 more characters] there`);
  });

  it("100,000 items in bounded time", () => {
    const items = exchanges(50_000);
    const started = mainThreadCpuMs();
    const history = conversationHistory(items, { budgetTokens: 20_000, countTokens: countTokensExact });
    expect(mainThreadCpuMs() - started, "CPU ms").toBeLessThan(5_000);
    expect(history.total).toBe(100_000);
    expect(history.messages).toHaveLength(50);
  });

  it("odd roles and types pass as what they are not: left out, never a crash", () => {
    const odd = [
      { content: [{ type: "text", text: "from nowhere" }], metadata: { type: "banana" } },
      { content: [], metadata: undefined },
      { content: [{ type: "text" }] },
      { content: [{ type: "text", text: "a real post" }], role: "system" },
      {
        content: [{ type: "text", text: "result without call" }],
        metadata: { type: "tool_result", tool: { invocation_id: "x", is_error: false, output: "" } },
      },
    ] as unknown as ThreadItem[];
    const history = conversationHistory(odd);
    expect(history.messages.map((message) => [message.role, message.kind, message.text])).toEqual([
      ["user", "text", "a real post"],
      ["assistant", "tool", "tool result without call"],
    ]);
  });

  it("refuses what is not items, bad options and a counter that fails, with INVALID_INPUT", () => {
    expect(() => conversationHistory("nope" as unknown as ThreadItem[])).toThrow(/items must be an array/);
    expect(() => conversationHistory([null] as unknown as ThreadItem[])).toThrow(
      /items\[0\] must be a thread item/,
    );
    for (const maxMessages of [0, -1, 1.5, 10_001, Number.NaN, "50"]) {
      expect(() => conversationHistory([], { maxMessages } as never)).toThrow(
        /maxMessages must be an integer/,
      );
    }
    expect(() => conversationHistory([], { budgetTokens: 100 })).toThrow(/budgetTokens needs countTokens/);
    expect(() =>
      conversationHistory(exchanges(1), { budgetTokens: 2, countTokens: countTokensExact }),
    ).toThrow(/does not hold even the history's heading/);
    expect(() => conversationHistory(exchanges(1), { countTokens: () => -1 })).toThrow(
      /non-negative integer/,
    );
    expect(() =>
      conversationHistory(exchanges(1), {
        countTokens: () => {
          throw new Error("boom");
        },
      }),
    ).toThrow(/countTokens failed/);
  });

  it("images are placeholders, never their payload", () => {
    const png = "iVBORw0KGgo".padEnd(4000, "A");
    const line = JSON.stringify({
      type: "user",
      sessionId: "s1",
      uuid: "u1",
      message: {
        role: "user",
        content: [
          { type: "text", text: "what is in this screenshot?" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
        ],
      },
    });
    const { items } = convertClaudeCodeTranscript(`${line}\n`);
    const history = conversationHistory(items, { countTokens: countTokensExact });
    expect(history.messages).toHaveLength(1);
    expect(history.messages[0]!.text).toContain("what is in this screenshot?");
    expect(history.messages[0]!.text).toContain("[image: image/png, 3,000 bytes]");
    expect(history.text).not.toContain("iVBORw0KGgo");
  });
});

describe.skipIf(!real.present)("conversationHistory of real transcripts through the adapters", () => {
  it("Claude Code: the user's prompts and the agent's answers, newest last, tools with their briefs", () => {
    const file = "claude-code/session-9eda1058.jsonl";
    // What the user typed, read from the file itself: user records whose content is a string.
    const typed = real
      .records(file)
      .filter((record) => record.type === "user" && typeof record.message?.content === "string")
      .map((record) => record.message.content as string);
    const { items } = convertClaudeCodeTranscript(real.read(file));
    const history = conversationHistory(items, { budgetTokens: 20_000, countTokens: countTokensExact });
    const users = history.messages
      .filter((message) => message.role === "user")
      .map((message) => message.text);
    expect(users).toEqual(typed.filter((text) => !text.startsWith("<")).map((text) => text.trim()));
    expect(history.messages[0]).toEqual({
      role: "user",
      kind: "text",
      text: "show tools and store response in file",
    });
    expect(history.messages.map((message) => message.text)).toContain(
      "Task → Explore codemie-code repository structure → Perfect! Now I have a comprehensive understanding of the codebase. Let me compile this into a detailed overview. (506 lines)",
    );
    expect(history.tokens).toBeLessThanOrEqual(20_000);
    expect(history.tokens).toBe(countTokensExact(history.text));
  });

  it("Codex: a long rollout fitted to a small budget keeps its last answer", () => {
    const file = "codex/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl";
    const lastAnswer = real
      .records(file)
      .filter(
        (record) =>
          record.type === "response_item" &&
          record.payload?.type === "message" &&
          record.payload.role === "assistant",
      )
      .at(-1)
      ?.payload.content.find((part: { type: string }) => part.type === "output_text")?.text as string;
    const { items } = convertCodexRollout(real.read(file));
    const history = conversationHistory(items, { budgetTokens: 3_000, countTokens: countTokensExact });
    expect(history.tokens).toBeLessThanOrEqual(3_000);
    expect(history.messages.at(-1)?.role).toBe("assistant");
    expect(lastAnswer.startsWith(history.messages.at(-1)!.text.slice(0, 200))).toBe(true);
    expect(
      history.messages.some(
        (message) => message.kind === "tool" && message.text.startsWith("exec_command → "),
      ),
    ).toBe(true);
  });

  it("every real transcript, at 50 messages and 20,000 tokens, in bounded time", () => {
    for (const file of [...real.files("claude-code"), ...real.files("codex")]) {
      const convert = file.startsWith("codex/") ? convertCodexRollout : convertClaudeCodeTranscript;
      const { items } = convert(real.read(file));
      const started = mainThreadCpuMs();
      const history = conversationHistory(items, { budgetTokens: 20_000, countTokens: countTokensExact });
      expect(mainThreadCpuMs() - started, `${file}: CPU ms`).toBeLessThan(5_000);
      expect(history.tokens, file).toBeLessThanOrEqual(20_000);
      expect(history.messages.length, file).toBeLessThanOrEqual(50);
      expect(history.omitted, file).toBe(history.total - history.messages.length);
    }
  });
});
