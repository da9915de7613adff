import { type RealRecord as Fields, realTranscripts } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { DEFAULT_BUDGET_BYTES, measureThreadItem } from "../src/budget/fit-to-budget.js";
import {
  type ConversionResult,
  createClaudeAgentSdkAdapter,
  fitToBudget,
  isThreadItem,
  type ThreadItem,
  type TurnStats,
} from "../src/index.js";
import {
  convertClaudeCodeTranscript,
  convertCodexRollout,
  convertPiSession,
} from "./support/convert-whole.js";

const real = realTranscripts("real-transcript tests");
const readReal = real.read;
const realRecords = real.records;
const claudeFiles = real.files("claude-code");
const codexFiles = real.files("codex");
const piFiles = real.files("pi");
const CODEX_125 = "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl";
const CODEX_128 = "codex/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl";

const kindOf = (item: ThreadItem) =>
  (item.metadata as { status?: string } | undefined)?.status ?? item.metadata?.type ?? "post";
const ofKind = (items: ThreadItem[], kind: string) => items.filter((item) => kindOf(item) === kind);
const posts = (items: ThreadItem[]) => ofKind(items, "post").map((item) => item.content[0]!.text);
const tool = (item: ThreadItem) =>
  (item.metadata as { tool: { name?: string; invocation_id: string; is_error?: boolean; output?: string } })
    .tool;
const stats = (items: ThreadItem[]) =>
  ofKind(items, "turn_end").map((item) => (item.metadata as { stats: TurnStats }).stats);
// An unknown (null) figure makes the sum NaN: these files record every figure they are checked against.
const sum = (values: (number | null)[]) =>
  values.reduce<number>((total, value) => total + (value ?? Number.NaN), 0);

/** Control characters sanitizeText removes: C0 but tab and newline, DEL, C1. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/**
 * Text no human typed, as each agent writes it into user messages (defect 1): Claude Code's tags,
 * caveat and compaction summary; Codex's contextual fragments and its apps' attached context.
 * Checked anywhere in a post, not only at its start.
 */
const INJECTED =
  /<(?:command-(?:name|message|args)|local-command-|task-notification>|system-reminder>|bash-(?:input|stdout|stderr|notification)>|ide_(?:opened_file|selection)>|user-memory-input>|user-prompt-submit-hook>|environment_context>|user_instructions>|user_shell_command>|skill>|turn_aborted>|subagent_notification>|plugins>|subagents>|additional_context>)|^Caveat: |^This session is being continued|\[SYSTEM NOTIFICATION|# AGENTS\.md instructions|# Files mentioned by the user|# Context from my IDE setup/m;

/** Posts hold only what a human typed (defect 1). */
function expectHumanPosts(items: ThreadItem[]): void {
  for (const text of posts(items)) expect(text).not.toMatch(INJECTED);
}

/** The guarantees every conversion of a real file keeps. */
function expectSound(result: ConversionResult): void {
  expect(result.problems).toEqual([]);
  const results = new Set<string>();
  for (const item of result.items) {
    // Briefs and tool outputs are sanitized (issue 15, item 6).
    expect(item.content[0]!.text).not.toMatch(CONTROL);
    if (item.metadata?.type === "tool_result") expect(tool(item).output).not.toMatch(CONTROL);
    expect(isThreadItem(item), JSON.stringify(item).slice(0, 300)).toBe(true);
    const fitted = fitToBudget(item, { localLogPath: "session/threads/main/logs/thread.log" });
    expect(measureThreadItem(fitted)).toBeLessThanOrEqual(DEFAULT_BUDGET_BYTES);
    if (item.metadata?.type === "tool_result") {
      expect(results.has(tool(item).invocation_id)).toBe(false);
      results.add(tool(item).invocation_id);
    }
  }
}

describe.skipIf(!real.present)("real transcripts", () => {
  it("holds every file the README lists", () => {
    expect(claudeFiles).toHaveLength(10);
    expect(codexFiles).toEqual([CODEX_125, CODEX_128]);
    expect(piFiles).toEqual(["pi/before-compaction.jsonl", "pi/large-session.jsonl"]);
  });

  describe.each(claudeFiles)("Claude Code: %s", (file) => {
    const result = convertClaudeCodeTranscript(readReal(file));
    const records = realRecords(file);

    it("converts with no exception and no problem; every item valid, within budget once fitted, one result per call", () => {
      expectSound(result);
    });

    it("posts only what a human typed: no injected tag, caveat, reminder or subagent prompt (defect 1)", () => {
      expectHumanPosts(result.items);
      // A subagent's transcript holds no human prompt: the main agent or the harness wrote it.
      const prompts = records.filter(
        (record) =>
          record.type === "user" &&
          (typeof record.message?.content === "string" ||
            !record.message?.content?.some((block: Fields) => block.type === "tool_result")),
      );
      if (records.some((record) => record.isSidechain === true)) {
        expect(posts(result.items)).toEqual([]);
        expect(ofKind(result.items, "subagent_prompt")).toHaveLength(prompts.length);
      }
      // Every `/clear` the file records is a status.
      const clears = records.filter(
        (record) =>
          record.type === "user" &&
          typeof record.message?.content === "string" &&
          record.message.content.includes("<command-name>/clear</command-name>"),
      ).length;
      expect(
        ofKind(result.items, "slash_command").filter((item) => item.content[0]!.text === "/clear"),
      ).toHaveLength(clears);
    });

    it("counts each API message's tokens once: the turns add up to the file's usage", () => {
      const usageById = new Map<string, Fields>();
      for (const record of records) {
        if (record.type === "assistant" && record.message?.usage)
          usageById.set(record.message.id, record.message.usage);
      }
      const calls = [...usageById.values()];
      const turns = stats(result.items);
      expect(sum(turns.map((turn) => turn.output_tokens))).toBe(
        sum(calls.map((usage) => usage.output_tokens ?? 0)),
      );
      expect(sum(turns.map((turn) => turn.input_tokens_cached))).toBe(
        sum(calls.map((usage) => usage.cache_read_input_tokens ?? 0)),
      );
      expect(sum(turns.map((turn) => turn.input_tokens))).toBe(
        sum(
          calls.map(
            (usage) =>
              (usage.input_tokens ?? 0) +
              (usage.cache_creation_input_tokens ?? 0) +
              (usage.cache_read_input_tokens ?? 0),
          ),
        ),
      );
    });

    describe("through the Agent SDK adapter (the records have the SDK's message shapes)", () => {
      const adapter = createClaudeAgentSdkAdapter();
      const items = [...records.flatMap((record) => adapter.push(record)), ...adapter.end()];

      it("converts with no exception and no problem; every item valid, within budget once fitted, one result per call", () => {
        expectSound({ items, problems: [...adapter.problems], sessionId: adapter.sessionId });
      });

      it("posts only what a human typed: no meta line, compaction summary or subagent prompt (defect 1)", () => {
        expectHumanPosts(items);
        // The same posts as the transcript adapter's, but those only queue records hold.
        const userRecords = records
          .filter((record) => record.type === "user")
          .map((record) => JSON.stringify(record.message?.content));
        expect(posts(items)).toEqual(
          posts(result.items).filter((text) =>
            userRecords.some((content) => content.includes(JSON.stringify(text).slice(1, -1))),
          ),
        );
      });

      it("keeps every API message's tokens, though the records hold no result (defect 6)", () => {
        const turns = stats(items);
        expect(sum(turns.map((turn) => turn.output_tokens))).toBe(
          sum(stats(result.items).map((turn) => turn.output_tokens)),
        );
        expect(sum(turns.map((turn) => turn.input_tokens))).toBe(
          sum(stats(result.items).map((turn) => turn.input_tokens)),
        );
      });
    });
  });

  it("Claude Code: posts messages typed while the agent worked, once each (defect 5)", () => {
    // Read from the files' queue-operation lines: one handed over mid-turn (`remove`) in each of
    // two sessions, two sent as the next prompt (`dequeue`), one taken back (`popAll`).
    const of = (file: string) => posts(convertClaudeCodeTranscript(readReal(`claude-code/${file}`)).items);
    const count = (texts: string[], text: string) => texts.filter((each) => each === text).length;
    expect(
      count(of("session-3fe1b6bc.jsonl"), "check 019b7f07-4a68-7d10-a8ef-8454269f439d and event_msg type"),
    ).toBe(1);
    expect(count(of("session-3fe1b6bc.jsonl"), "check 019b7f07-4a68-7d10-a8ef-8454269f439d")).toBe(0);
    expect(
      count(of("session-624a4a58.jsonl"), "no, add conversationId field, but set value from sessionId"),
    ).toBe(1);
    expect(count(of("session-196820da.jsonl"), "don't produce code, design solution first")).toBe(1);
    expect(
      count(
        of("session-196820da.jsonl"),
        "there is no need to track existing session, once /clear is found - need to complete existing session and create completely new one",
      ),
    ).toBe(1);
  });

  it("Claude Code: a subagent's toolUseResult.usage is its last model call, so its tokens come from its own transcript", () => {
    const main = "claude-code/incremental-subagents/turn-2.jsonl";
    const sub = "claude-code/incremental-subagents/turn-2/subagents/agent-a485154.jsonl";
    const report = realRecords(main).find(
      (record) => record.toolUseResult?.agentId === "a485154",
    )!.toolUseResult;
    const calls = new Map<string, Fields>();
    for (const record of realRecords(sub))
      if (record.type === "assistant") calls.set(record.message.id, record.message.usage);
    const last = [...calls.values()].at(-1)!;
    expect(report.usage).toMatchObject({
      input_tokens: last.input_tokens,
      cache_creation_input_tokens: last.cache_creation_input_tokens,
      cache_read_input_tokens: last.cache_read_input_tokens,
      output_tokens: last.output_tokens,
    });
    expect(calls.size).toBeGreaterThan(1);
    // The subagent's file, converted on its own, has every call's tokens in its turn.
    const [turn] = stats(convertClaudeCodeTranscript(readReal(sub)).items);
    expect(turn!.output_tokens).toBe(sum([...calls.values()].map((usage) => usage.output_tokens)));
    // The main transcript's result names the subagent and its reported figures.
    const result = ofKind(convertClaudeCodeTranscript(readReal(main)).items, "tool_result").find(
      (item) => (tool(item) as { subagent?: unknown }).subagent !== undefined,
    );
    expect((tool(result!) as { subagent?: unknown }).subagent).toEqual({
      agent_id: "a485154",
      status: "completed",
      total_tokens: report.totalTokens,
      tool_uses: report.totalToolUseCount,
      duration_ms: report.totalDurationMs,
    });
  });

  describe.each(codexFiles)("Codex: %s", (file) => {
    const result = convertCodexRollout(readReal(file));
    const records = realRecords(file);
    const payloads = records.map((record) => record.payload ?? {});
    const resultFor = (id: string) =>
      result.items.find((item) => item.metadata?.type === "tool_result" && tool(item).invocation_id === id);

    it("converts with no exception and no problem; every item valid, within budget once fitted, one result per call", () => {
      expectSound(result);
    });

    it("reports every failed command as an error: by the header's exit code and by exec_command_end (defect 2)", () => {
      const failed = new Set<string>();
      for (const payload of payloads) {
        if (payload.type === "exec_command_end" && payload.exit_code !== 0) failed.add(payload.call_id);
        if (
          payload.type === "function_call_output" &&
          /\nProcess exited with code [1-9]\d*\n/.test(payload.output)
        )
          failed.add(payload.call_id);
      }
      for (const id of failed) expect(tool(resultFor(id)!).is_error, id).toBe(true);
      for (const item of result.items.filter((each) => each.metadata?.type === "tool_result")) {
        if (!failed.has(tool(item).invocation_id) && !tool(item).output!.includes(" failed: "))
          expect(tool(item).is_error).toBe(false);
      }
    });

    it("briefs and outputs show the output, never Codex's header, truncation note or MCP JSON (defect 3)", () => {
      const framing =
        /^(Chunk ID|Wall time|Process (exited|running)|Original token count|Output:|Total output lines|Warning: truncated output|\[\{"type")/;
      for (const item of result.items.filter((each) => each.metadata?.type === "tool_result")) {
        expect(item.content[0]!.text.slice(2)).not.toMatch(framing);
        expect(tool(item).output).not.toMatch(framing);
      }
    });

    it("counts the lines of a cut output as Codex's truncation note says (defect 3)", () => {
      const cut = payloads.filter(
        (payload) =>
          payload.type === "function_call_output" &&
          /\nOutput:\n(Warning: truncated output [^\n]*\n)?Total output lines: \d+\n/.test(payload.output),
      );
      expect(cut.length).toBeGreaterThan(0);
      for (const payload of cut) {
        const lines = Number(/Total output lines: (\d+)/.exec(payload.output)![1]);
        const item = resultFor(payload.call_id)!;
        expect(item.content[0]!.text).toMatch(new RegExp(` \\(${lines} lines\\)$`));
        expect((tool(item) as { total_lines?: number }).total_lines).toBe(lines);
      }
    });

    it("shows an MCP result's text, not its JSON (defect 3)", () => {
      for (const payload of payloads) {
        const json = /^Wall time: [^\n]*\nOutput:\n(\[\{[\s\S]*)$/.exec(
          payload.type === "function_call_output" ? payload.output : "",
        )?.[1];
        if (json === undefined) continue;
        const texts = (JSON.parse(json) as Fields[]).map((block) => block.text);
        expect(tool(resultFor(payload.call_id)!).output).toBe(texts.join("\n"));
      }
    });

    it("posts only what a human typed: no injected context, skills or app boilerplate (defect 1)", () => {
      expectHumanPosts(result.items);
    });

    it("has one turn per task, or per prompt where the file has no task events (defect 4)", () => {
      const tasks = payloads.filter((payload) => payload.type === "task_complete").length;
      const prompts = payloads.filter((payload) => payload.type === "user_message").length;
      expect(ofKind(result.items, "turn_end")).toHaveLength(tasks > 0 ? tasks : prompts);
      // The desktop app's prompt is posted without the files it lists (checked below).
      const request = (text: string) => text.split("## My request for Codex:\n").at(-1);
      expect(posts(result.items)).toEqual(
        payloads
          .filter((payload) => payload.type === "user_message")
          .map((payload) => request(payload.message)),
      );
    });

    it("reads web searches, namespaced calls and keys sent to processes (defect 8)", () => {
      const searches = payloads
        .filter((payload) => payload.type === "web_search_end")
        .map((payload) => payload.call_id);
      const calls = result.items.filter((item) => item.metadata?.type === "tool_call");
      expect(
        calls.filter((item) => tool(item).name === "web_search").map((item) => tool(item).invocation_id),
      ).toEqual(searches);
      const namespaced = payloads.filter((payload) => payload.type === "function_call" && payload.namespace);
      expect(calls.filter((item) => tool(item).name!.startsWith("mcp__"))).toHaveLength(namespaced.length);
      for (const item of calls) expect(item.content[0]!.text).not.toMatch(/[\u0000-\u001f\u007f]/);
    });
  });

  it("Codex: the real files hold the cases of the issue", () => {
    const payloads = (file: string) => realRecords(file).map((record) => record.payload ?? {});
    const newer = payloads(CODEX_125);
    expect(
      newer.filter((payload) => payload.type === "exec_command_end" && payload.exit_code !== 0),
    ).toHaveLength(4);
    expect(
      newer.filter((payload) => payload.type === "web_search_call" && payload.id === undefined),
    ).toHaveLength(3);
    expect(newer.filter((payload) => payload.type === "patch_apply_end")).toHaveLength(3);
    expect(
      convertCodexRollout(readReal(CODEX_125))
        .items.map((item) => item.content[0]!.text)
        .filter((brief) => brief.startsWith("write_stdin → ^C")),
    ).toEqual(["write_stdin → ^C to session 20936"]);
    const names = convertCodexRollout(readReal(CODEX_128))
      .items.filter((item) => item.metadata?.type === "tool_call")
      .map((item) => tool(item).name);
    expect(names.filter((name) => name === "mcp__node_repl__js")).toHaveLength(3);
    // The 0.128 desktop prompt: the request is the post, the files it mentions a status.
    const desktop = convertCodexRollout(readReal(CODEX_128)).items.slice(1, 3);
    expect(desktop.map((item) => [kindOf(item), item.content[0]!.text])).toEqual([
      ["prompt_context", "Files mentioned: Sample Project Demo Prep.vtt"],
      [
        "post",
        "analyze trascript and summarzie action items related to codemie and demo preapration, specifically focus on demo, User and Vadym\n",
      ],
    ]);
  });

  it("Codex: the turns' tokens add up to the rollout's last cumulative total", () => {
    const records = realRecords(CODEX_125);
    const last = records
      .filter((record) => record.payload?.type === "token_count" && record.payload.info)
      .at(-1)!.payload.info.total_token_usage;
    const turns = stats(convertCodexRollout(readReal(CODEX_125)).items);
    expect(sum(turns.map((turn) => turn.input_tokens))).toBe(last.input_tokens);
    expect(sum(turns.map((turn) => turn.input_tokens_cached))).toBe(last.cached_input_tokens);
    expect(sum(turns.map((turn) => turn.output_tokens))).toBe(last.output_tokens);
  });

  it("Codex: a rollout without token_count gives unknown token figures, never zeros", () => {
    expect(realRecords(CODEX_128).filter((record) => record.payload?.type === "token_count")).toEqual([]);
    const turns = stats(convertCodexRollout(readReal(CODEX_128)).items);
    expect(turns.length).toBeGreaterThan(0);
    for (const turn of turns) {
      expect(turn).toMatchObject({ input_tokens: null, input_tokens_cached: null, output_tokens: null });
    }
  });

  describe.each(piFiles)("pi: %s", (file) => {
    const result = convertPiSession(readReal(file));
    const messages = realRecords(file)
      .filter((record) => record.type === "message")
      .map((record) => record.message as Fields);

    it("converts with no exception and no problem; every item valid, within budget once fitted, one result per call", () => {
      expectSound(result);
    });

    it("posts only what a human typed (defect 1)", () => {
      expectHumanPosts(result.items);
    });

    it("has a post per user message, a call per toolCall block, a result per toolResult", () => {
      const blocks = messages
        .filter((message) => message.role === "assistant")
        .flatMap((message) => message.content as Fields[]);
      expect(ofKind(result.items, "post")).toHaveLength(
        messages.filter((message) => message.role === "user").length,
      );
      expect(ofKind(result.items, "tool_call")).toHaveLength(
        blocks.filter((block) => block.type === "toolCall").length,
      );
      expect(ofKind(result.items, "tool_result")).toHaveLength(
        messages.filter((message) => message.role === "toolResult").length,
      );
    });

    it("the turns' tokens add up to the session's usage", () => {
      const usages = messages
        .filter((message) => message.role === "assistant")
        .map((message) => message.usage as Fields);
      const turns = stats(result.items);
      expect(sum(turns.map((turn) => turn.output_tokens))).toBe(sum(usages.map((usage) => usage.output)));
      expect(sum(turns.map((turn) => turn.input_tokens_cached))).toBe(
        sum(usages.map((usage) => usage.cacheRead)),
      );
      expect(sum(turns.map((turn) => turn.input_tokens))).toBe(
        sum(usages.map((usage) => usage.input + usage.cacheRead + usage.cacheWrite)),
      );
    });
  });
});
