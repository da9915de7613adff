import { describe, expect, it } from "vitest";
import { isThreadItem } from "../../src/schema/parse-thread-item.js";
import type { ThreadItem } from "../../src/schema/thread-item-schema.js";
import { convertCodexRollout } from "../support/convert-whole.js";

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
      // The brief is the command's output, not Codex's header above it.
      "→ no such file (1 line)",
      "local_shell → ls -la",
      "→ total 0 (1 line)",
      "Turn aborted: interrupted",
      "Turn complete",
    ]);
    expect(items[1]!.metadata).toMatchObject({ tool: { input: "{not json" } });
    expect(items[2]!.metadata).toMatchObject({ tool: { is_error: true, output: "no such file" } });
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
    // No token_count anywhere: the figures are unknown, not zero (issue 14, item 8).
    expect(items[2]!.metadata).toMatchObject({
      stats: { input_tokens: null, input_tokens_cached: null, output_tokens: null, duration_ms: null },
    });
  });

  it("sanitizes command output and keys sent to a process (C1 controls included)", () => {
    const jsonl = [
      line("event_msg", { type: "task_started", model_context_window: 272000 }),
      line("response_item", {
        type: "function_call",
        name: "shell",
        arguments: '{"command":["bash","-lc","ls --color"]}',
        call_id: "call_ls",
      }),
      line("response_item", {
        type: "function_call_output",
        call_id: "call_ls",
        output: JSON.stringify({
          output: "\u001b[01;34msrc\u001b[0m\r\nREADME\u0000\n",
          metadata: { exit_code: 0 },
        }),
      }),
      line("response_item", {
        type: "function_call",
        name: "write_stdin",
        arguments: JSON.stringify({ session_id: 7, chars: "y\u009b" }),
        call_id: "call_keys",
      }),
      line("event_msg", { type: "task_complete", last_agent_message: "" }),
    ].join("\n");
    const { items, problems } = convertCodexRollout(jsonl);
    expect(problems).toEqual([]);
    const result = items.find((item) => item.metadata?.type === "tool_result")!;
    expect(result.metadata).toMatchObject({ tool: { output: "src\nREADME\n" } });
    expect(briefs(items)).toContain("→ src (2 lines)");
    // C0 keys are shown in caret notation, C1 in hex: never raw, never eating the text after them.
    expect(briefs(items)).toContain("write_stdin → y\\x9b to session 7");
  });

  it("a turn without a token_count has unknown token figures; a turn with one keeps its own", () => {
    clock = Date.parse("2025-11-04T15:00:00.000Z");
    // Hand-written from codex-rs/protocol: two tasks, a token_count only in the first.
    const task = (prompt: string, answer: string, counted: boolean) => [
      line("event_msg", { type: "task_started", model_context_window: 272000 }),
      line("event_msg", { type: "user_message", message: prompt, kind: "plain" }),
      line("response_item", {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: answer }],
      }),
      ...(counted ? [line("event_msg", usage(3000, 1000, 40))] : []),
      line("event_msg", { type: "task_complete", last_agent_message: answer }),
    ];
    const jsonl = [
      line("session_meta", { id: SESSION, cwd: "/repo", cli_version: "0.46.0", originator: "codex_cli_rs" }),
      ...task("first", "one", true),
      ...task("second", "two", false),
    ].join("\n");
    const { items, problems } = convertCodexRollout(jsonl);
    expect(problems).toEqual([]);
    const stats = items.filter((item) => item.metadata?.type === "turn_end").map((item) => item.metadata);
    expect(stats).toEqual([
      {
        type: "turn_end",
        stats: { input_tokens: 3000, input_tokens_cached: 1000, output_tokens: 40, duration_ms: 4000 },
      },
      {
        type: "turn_end",
        stats: { input_tokens: null, input_tokens_cached: null, output_tokens: null, duration_ms: 3000 },
      },
    ]);
    for (const item of items) expect(isThreadItem(item)).toBe(true);
  });

  it("reads token_count totals from the line's text, and parses any line not in Codex's exact shape", () => {
    // Hand-written as Codex writes them (codex-rs/protocol, serde field order), then variants.
    const started = [
      '{"timestamp":"2025-11-04T16:00:00.000Z","type":"event_msg","payload":{"type":"task_started","model_context_window":272000}}',
      '{"timestamp":"2025-11-04T16:00:00.000Z","type":"event_msg","payload":{"type":"user_message","message":"go","kind":"plain"}}',
      '{"timestamp":"2025-11-04T16:00:00.500Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}',
    ].join("\n");
    const complete = (at: string) =>
      `{"timestamp":"2025-11-04T16:00:0${at}.000Z","type":"event_msg","payload":{"type":"task_complete","last_agent_message":null}}`;
    const totals =
      '{"input_tokens":3000,"cached_input_tokens":1000,"output_tokens":40,"reasoning_output_tokens":0,"total_tokens":3040}';
    const codexShape = `{"timestamp":"2025-11-04T16:00:01.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":${totals},"last_token_usage":${totals},"model_context_window":272000},"rate_limits":{"primary":{"used_percent":4.0,"window_minutes":300,"resets_in_seconds":1200},"secondary":null}}}`;
    const otherOrder = `{"type":"event_msg","timestamp":"2025-11-04T16:00:01.000Z","payload":{"info":{"last_token_usage":${totals},"total_token_usage":${totals}},"type":"token_count"}}`;
    const spaced = codexShape.replace('"total_token_usage":{', '"total_token_usage": {');
    const noInfo =
      '{"timestamp":"2025-11-04T16:00:01.000Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":null}}';
    const stats = (tokenLine: string) => {
      const { items, problems } = convertCodexRollout([started, tokenLine, complete("2")].join("\n"));
      expect(problems).toEqual([]);
      return items.find((item) => item.metadata?.type === "turn_end")?.metadata;
    };
    const counted = {
      type: "turn_end",
      stats: { input_tokens: 3000, input_tokens_cached: 1000, output_tokens: 40, duration_ms: 2000 },
    };
    expect(stats(codexShape)).toEqual(counted);
    expect(stats(otherOrder)).toEqual(counted);
    expect(stats(spaced)).toEqual(counted);
    expect(stats(noInfo)).toEqual({
      type: "turn_end",
      stats: { input_tokens: null, input_tokens_cached: null, output_tokens: null, duration_ms: 2000 },
    });
    // Cut lines are never skimmed: they do not end in "}", so they are parsed and reported.
    const cutCount = codexShape.slice(0, 150);
    const cutMessage =
      '{"timestamp":"2025-11-04T16:00:01.000Z","type":"event_msg","payload":{"type":"agent_message","message":"half';
    const { problems } = convertCodexRollout([started, cutCount, cutMessage, complete("2")].join("\n"));
    expect(problems.map((problem) => [problem.line, problem.message.slice(0, 14)])).toEqual([
      [4, "not valid JSON"],
      [5, "not valid JSON"],
    ]);
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

// Lines as Codex 0.125 and 0.128 write them (the fields of real rollouts; ids and text invented).
describe("Codex rollouts as newer versions write them", () => {
  const TURN = "019e162b-0011-7240-abbc-f7b732e49728";
  const exec = (callId: string, cmd: string) =>
    line("response_item", {
      type: "function_call",
      name: "exec_command",
      arguments: JSON.stringify({ cmd, workdir: "/repo", yield_time_ms: 1000, max_output_tokens: 12000 }),
      call_id: callId,
    });
  const stdin = (callId: string, session: number, chars: string) =>
    line("response_item", {
      type: "function_call",
      name: "write_stdin",
      arguments: JSON.stringify({
        session_id: session,
        chars,
        yield_time_ms: 1000,
        max_output_tokens: 12000,
      }),
      call_id: callId,
    });
  const output = (callId: string, text: string) =>
    line("response_item", { type: "function_call_output", call_id: callId, output: text });
  const commandEnd = (callId: string, exitCode: number, aggregated: string) =>
    line("event_msg", {
      type: "exec_command_end",
      call_id: callId,
      process_id: "59181",
      turn_id: TURN,
      command: ["/bin/zsh", "-lc", "rg -n compact node_modules/opencode"],
      cwd: "/repo",
      source: "unified_exec_startup",
      stdout: "",
      stderr: "",
      aggregated_output: aggregated,
      exit_code: exitCode,
      duration: { secs: 8, nanos: 230970250 },
      formatted_output: "",
      status: exitCode === 0 ? "completed" : "failed",
    });
  const taskStarted = () =>
    line("event_msg", {
      type: "task_started",
      turn_id: TURN,
      started_at: 1778488377,
      model_context_window: 258400,
    });
  const taskComplete = () =>
    line("event_msg", { type: "task_complete", turn_id: TURN, last_agent_message: "Done." });
  const userMessage = (text: string, images: string[] = []) =>
    line("event_msg", { type: "user_message", message: text, images, local_images: [], text_elements: [] });
  const promptItem = (text: string) =>
    line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text }] });
  const said = (text: string) =>
    line("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text }] });
  const results = (items: ThreadItem[]) =>
    items
      .filter((item) => item.metadata?.type === "tool_result")
      .map((item) => {
        const { tool } = item.metadata as {
          tool: { invocation_id: string; is_error: boolean; output: string };
        };
        return [tool.invocation_id, tool.is_error, item.content[0]!.text, tool.output];
      });

  it("reads the exit code in the output's header, and shows the output, not the header, in the brief (defects 2, 3)", () => {
    const jsonl = [
      exec("call_fail", "rg -n compact node_modules/opencode"),
      output(
        "call_fail",
        "Chunk ID: de4b53\nWall time: 4.1190 seconds\nProcess exited with code 2\nOriginal token count: 34\nOutput:\nrg: node_modules/opencode: No such file or directory (os error 2)\n",
      ),
      exec("call_ok", "ls"),
      output(
        "call_ok",
        "Chunk ID: a21e41\nWall time: 0.0121 seconds\nProcess exited with code 0\nOriginal token count: 12\nOutput:\nREADME.md\npackage.json\nsrc\ntests\nvitest.config.ts\n",
      ),
    ].join("\n");
    expect(results(convertCodexRollout(jsonl).items)).toEqual([
      [
        "call_fail",
        true,
        "→ rg: node_modules/opencode: No such file or directory (os error 2) (1 line)",
        "rg: node_modules/opencode: No such file or directory (os error 2)\n",
      ],
      ["call_ok", false, "→ README.md (5 lines)", "README.md\npackage.json\nsrc\ntests\nvitest.config.ts\n"],
    ]);
  });

  it("gives a command still running when its output was recorded its result when it exits (defect 2)", () => {
    const jsonl = [
      taskStarted(),
      exec("call_run", "rg -n compact node_modules/opencode"),
      output(
        "call_run",
        "Chunk ID: 5a0c8d\nWall time: 1.0041 seconds\nProcess running with session ID 59181\nOriginal token count: 0\nOutput:\n",
      ),
      stdin("call_poll", 59181, ""),
      output(
        "call_poll",
        "Chunk ID: de4b53\nWall time: 4.1190 seconds\nProcess exited with code 2\nOriginal token count: 34\nOutput:\nrg: node_modules/opencode: No such file or directory (os error 2)\n",
      ),
      commandEnd("call_run", 2, "rg: node_modules/opencode: No such file or directory (os error 2)\n"),
      exec("call_never", "npm run dev"),
      output(
        "call_never",
        "Chunk ID: 0617d4\nWall time: 1.0019 seconds\nProcess running with session ID 25857\nOriginal token count: 0\nOutput:\n  VITE v5.4.2  ready in 312 ms\n",
      ),
      taskComplete(),
    ].join("\n");
    const { items } = convertCodexRollout(jsonl);
    expect(results(items)).toEqual([
      [
        "call_poll",
        true,
        "→ rg: node_modules/opencode: No such file or directory (os error 2) (1 line)",
        "rg: node_modules/opencode: No such file or directory (os error 2)\n",
      ],
      [
        "call_run",
        true,
        "→ rg: node_modules/opencode: No such file or directory (os error 2) (1 line)",
        "rg: node_modules/opencode: No such file or directory (os error 2)\n",
      ],
      // Never reported its exit: released at the end of input with what it printed, not failed.
      ["call_never", false, "→ VITE v5.4.2  ready in 312 ms (1 line)", "  VITE v5.4.2  ready in 312 ms\n"],
    ]);
    expect(types(items).slice(-2)).toEqual(["turn_end", "tool_result"]);
  });

  it("keeps one turn for a task during which the user typed a message (defect 4)", () => {
    const jsonl = [
      taskStarted(),
      promptItem("update the default compaction threshold to 90"),
      userMessage("update the default compaction threshold to 90"),
      exec("call_1", "rg -n threshold src"),
      output(
        "call_1",
        "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\nsrc/config.ts:12\n",
      ),
      promptItem("also in the docs"),
      userMessage("also in the docs"),
      exec("call_2", "rg -n threshold docs"),
      output(
        "call_2",
        "Chunk ID: 2\nWall time: 0.1 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\ndocs/config.md:40\n",
      ),
      said("Updated both."),
      taskComplete(),
    ].join("\n");
    const { items } = convertCodexRollout(jsonl);
    expect(types(items)).toEqual([
      "post",
      "tool_call",
      "tool_result",
      "post",
      "tool_call",
      "tool_result",
      "text",
      "turn_end",
    ]);
  });

  it("posts a prompt once, from whichever copy the rollout has", () => {
    const image =
      "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAfbLI3wAAAABJRU5ErkJggg==";
    // 0.128 trimmed by its owner: prompts only as events.
    const eventsOnly = [
      userMessage("summarize the transcript"),
      said("Summary: …"),
      userMessage("draft the demo", [image]),
      said("Draft: …"),
    ];
    const { items } = convertCodexRollout(eventsOnly.join("\n"));
    expect(briefs(items)).toEqual([
      "summarize the transcript",
      "Summary: …",
      "Turn complete",
      "draft the demo\n[image: image/png, 70 bytes]",
      "Draft: …",
      "Turn complete",
    ]);
    // 0.125: both copies, the response item first.
    const both = [promptItem("show tools"), userMessage("show tools"), said("Tools: …")];
    expect(briefs(convertCodexRollout(both.join("\n")).items)).toEqual([
      "show tools",
      "Tools: …",
      "Turn complete",
    ]);
  });

  it("reads web searches without ids, namespaced MCP calls, patch results and keys sent to a process (defect 8)", () => {
    const action = {
      type: "search",
      query: "opencode compaction threshold",
      queries: ["opencode compaction threshold", "opencode autocompact config"],
    };
    const jsonl = [
      line("event_msg", {
        type: "web_search_end",
        call_id: "ws_023bc037ca71df15016a0195bb758c819ba5b12d072d9bb0ae",
        query: action.query,
        action,
      }),
      line("response_item", { type: "web_search_call", status: "completed", action }),
      line("response_item", {
        type: "function_call",
        name: "js",
        namespace: "mcp__node_repl__",
        arguments: JSON.stringify({
          title: "Connect browser session",
          code: "await agent.browser.tabs.list()",
        }),
        call_id: "call_QN0Lw7jU6TTLrFELRdHVYQZi",
      }),
      line("response_item", {
        type: "custom_tool_call",
        status: "completed",
        call_id: "call_patch",
        name: "apply_patch",
        input: "*** Begin Patch\n*** Update File: src/config.ts\n@@\n-0.8\n+0.9\n*** End Patch\n",
      }),
      line("event_msg", {
        type: "patch_apply_end",
        call_id: "call_patch",
        turn_id: TURN,
        stdout: "",
        stderr: "Failed to find expected lines in src/config.ts",
        success: false,
        changes: {},
        status: "failed",
      }),
      line("response_item", {
        type: "custom_tool_call_output",
        call_id: "call_patch",
        output:
          '{"output":"Failed to find expected lines in src/config.ts","metadata":{"exit_code":0,"duration_seconds":0.1}}',
      }),
      stdin("call_ctrl_c", 20936, "\u0003"),
      output(
        "call_ctrl_c",
        "write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open",
      ),
      stdin("call_wait", 20936, ""),
    ].join("\n");
    const { items, problems } = convertCodexRollout(jsonl);
    expect(problems).toEqual([]);
    expect(briefs(items)).toEqual([
      "web_search → opencode compaction threshold",
      "→ (no output)",
      "mcp__node_repl__js",
      "apply_patch → src/config.ts",
      "→ Failed to find expected lines in src/config.ts (1 line)",
      "write_stdin → ^C to session 20936",
      "→ write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open (1 line)",
      "write_stdin → wait for session 20936",
      "Turn complete",
    ]);
    expect(items[0]!.metadata).toMatchObject({
      tool: {
        name: "web_search",
        invocation_id: "ws_023bc037ca71df15016a0195bb758c819ba5b12d072d9bb0ae",
        input: action,
      },
    });
    expect(results(items).map(([id, isError]) => [id, isError])).toEqual([
      ["ws_023bc037ca71df15016a0195bb758c819ba5b12d072d9bb0ae", false],
      ["call_patch", true],
      ["call_ctrl_c", true],
    ]);
  });

  it("keeps a command running past its task open, so that a late non-zero exit is an error (defect 2)", () => {
    const jsonl = [
      taskStarted(),
      exec("call_dev", "npm run dev"),
      output(
        "call_dev",
        "Chunk ID: 0617d4\nWall time: 1.0019 seconds\nProcess running with session ID 25857\nOriginal token count: 9\nOutput:\n  VITE v5.4.2  ready in 312 ms\n",
      ),
      said("The dev server runs on port 5173."),
      taskComplete(),
      // The server crashed after the task was over: its end comes after task_complete.
      commandEnd(
        "call_dev",
        1,
        "  VITE v5.4.2  ready in 312 ms\nError: listen EADDRINUSE: address already in use :::5173\n",
      ),
    ].join("\n");
    const { items } = convertCodexRollout(jsonl);
    expect(types(items)).toEqual(["tool_call", "text", "turn_end", "tool_result"]);
    expect(results(items)).toEqual([
      [
        "call_dev",
        true,
        "→ VITE v5.4.2  ready in 312 ms (2 lines)",
        "  VITE v5.4.2  ready in 312 ms\nError: listen EADDRINUSE: address already in use :::5173\n",
      ],
    ]);
  });

  it("counts the lines of an output Codex cut from its truncation note, never showing the note (defect 3)", () => {
    const kept = [
      "README.md:281:- **[Configuration](docs/CONFIGURATION.md)** - Setup wizard",
      'package.json:121:    "dotenv": "^16.3.1",',
      "…8512 tokens truncated…",
      "src/utils/paths.ts:252: * isValidUuid('f52d1386')",
    ].join("\n");
    const jsonl = [
      // 0.125: the line count alone, after `Output:`.
      exec("call_cut", "rg -n env ."),
      output(
        "call_cut",
        `Chunk ID: e213c4\nWall time: 0.1799 seconds\nProcess exited with code 0\nOriginal token count: 10768\nOutput:\nTotal output lines: 460\n\n${kept}\n`,
      ),
      // Newer: a warning line above it (codex-rs/utils/output-truncation, formatted_truncate_text).
      exec("call_failed_cut", "rg -n dependencies"),
      output(
        "call_failed_cut",
        `Chunk ID: 3fa830\nWall time: 0.0000 seconds\nProcess exited with code 2\nOriginal token count: 45599\nOutput:\nWarning: truncated output (original token count: 45599)\nTotal output lines: 558\n\nrg: app: No such file or directory (os error 2)\n${kept}\n`,
      ),
    ].join("\n");
    const { items } = convertCodexRollout(jsonl);
    expect(results(items)).toEqual([
      [
        "call_cut",
        false,
        "→ README.md:281:- **[Configuration](docs/CONFIGURATION.md)** - Setup wizard (460 lines)",
        `${kept}\n`,
      ],
      [
        "call_failed_cut",
        true,
        "→ rg: app: No such file or directory (os error 2) (558 lines)",
        `rg: app: No such file or directory (os error 2)\n${kept}\n`,
      ],
    ]);
    const totals = items
      .filter((item) => item.metadata?.type === "tool_result")
      .map((item) => (item.metadata as { tool: { total_lines?: number } }).tool.total_lines);
    expect(totals).toEqual([460, 558]);
  });

  it("shows an MCP tool's result by its content, not as the JSON Codex 0.128 records (defect 3)", () => {
    const refusal =
      "Browser Use rejected this action due to browser security policy. Reason: The user has requested that http://localhost:5173 should not be used.";
    const jsonl = [
      line("response_item", {
        type: "function_call",
        name: "js",
        namespace: "mcp__node_repl__",
        arguments: JSON.stringify({ title: "Open the app", code: "await tab.goto('http://localhost:5173')" }),
        call_id: "call_mcp",
      }),
      output(
        "call_mcp",
        `Wall time: 1017.0997 seconds\nOutput:\n${JSON.stringify([{ type: "text", text: refusal }])}`,
      ),
      line("response_item", {
        type: "function_call",
        name: "screenshot",
        namespace: "mcp__browser__",
        arguments: "{}",
        call_id: "call_shot",
      }),
      output(
        "call_shot",
        `Wall time: 0.4120 seconds\nOutput:\n${JSON.stringify([
          { type: "text", text: "Captured the tab." },
          {
            type: "image",
            data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAfbLI3wAAAABJRU5ErkJggg==",
            mimeType: "image/png",
          },
        ])}`,
      ),
      // A command that prints a JSON array stays as it printed it.
      exec("call_json", "cat blocks.json"),
      output(
        "call_json",
        'Chunk ID: 77aa01\nWall time: 0.0100 seconds\nProcess exited with code 0\nOriginal token count: 9\nOutput:\n[{"type":"text","text":"hi"}]\n',
      ),
    ].join("\n");
    expect(results(convertCodexRollout(jsonl).items).map(([id, , brief, text]) => [id, brief, text])).toEqual(
      [
        ["call_mcp", `→ ${refusal.slice(0, 120)}… (1 line)`, refusal],
        ["call_shot", "→ Captured the tab. (2 lines)", "Captured the tab.\n[image: image/png, 70 bytes]"],
        ["call_json", '→ [{"type":"text","text":"hi"}] (1 line)', '[{"type":"text","text":"hi"}]\n'],
      ],
    );
  });

  it("posts no text Codex injected into user messages; skills and subagent notifications are statuses (defect 1)", () => {
    const injected = (text: string) => promptItem(text);
    const jsonl = [
      taskStarted(),
      line("response_item", {
        type: "message",
        role: "user",
        content: [
          {
            type: "input_text",
            text: "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nUse pnpm.\n</INSTRUCTIONS>",
          },
          {
            type: "input_text",
            text: "<environment_context>\n  <cwd>/repo</cwd>\n  <shell>zsh</shell>\n</environment_context>",
          },
        ],
      }),
      injected(
        "<turn_aborted>\nThe user interrupted the previous turn on purpose. Any running unified exec processes were terminated. If any tools/commands were aborted, they may have partially executed; verify current state before retrying.\n</turn_aborted>",
      ),
      injected(
        "<skill>\n<name>brainstorming</name>\n<path>/Users/dev/.codex/skills/brainstorming/SKILL.md</path>\n---\nname: brainstorming\ndescription: Explore ideas before writing code\n---\n\n# Brainstorming\n</skill>",
      ),
      injected(
        '<subagent_notification>\n{"agent_id":"019e1700-aa11-7bb2-8cc3-d4e5f6a7b8c9","status":{"completed":"Found 3 call sites."}}\n</subagent_notification>',
      ),
      injected("<plugins>\n- github: Read issues and pull requests\n</plugins>"),
      injected("<SUBAGENTS>\n- explorer\n</SUBAGENTS>"),
      // Typed text that merely starts with a tag is typed text.
      promptItem("<skill> tags are what Codex writes for skills; explain them"),
      userMessage("<skill> tags are what Codex writes for skills; explain them"),
      said("They load a skill's instructions."),
      taskComplete(),
    ].join("\n");
    const { items, problems } = convertCodexRollout(jsonl);
    expect(problems).toEqual([]);
    expect(items.map((item) => [types([item])[0], item.content[0]!.text])).toEqual([
      ["skill_loaded", "Skill loaded: brainstorming"],
      ["subagent_notification", "Subagent 019e1700-aa11-7bb2-8cc3-d4e5f6a7b8c9: completed"],
      ["post", "<skill> tags are what Codex writes for skills; explain them"],
      ["text", "They load a skill's instructions."],
      ["turn_end", "Turn complete"],
    ]);
    expect(items[0]!.metadata).toMatchObject({ detail: "/Users/dev/.codex/skills/brainstorming/SKILL.md" });
  });

  it("posts the request of a desktop-app prompt, and the files it mentions as a status", () => {
    const desktop =
      "\n# Files mentioned by the user:\n\n## Demo Prep.vtt: /Users/dev/Downloads/Demo Prep.vtt\n\n## notes.md: /Users/dev/notes.md\n\n## My request for Codex:\nsummarize the action items for the demo\n";
    const ide =
      "# Context from my IDE setup:\n\n## Active file: src/config.ts\n\n## Open tabs:\n- config.ts: src/config.ts\n\n## My request for Codex:\nwhy is the threshold 0.8?";
    const jsonl = [
      userMessage(desktop),
      said("Action items: …"),
      promptItem(ide),
      userMessage(ide),
      said("Because …"),
    ].join("\n");
    const { items } = convertCodexRollout(jsonl);
    expect(items.map((item) => [types([item])[0], item.content[0]!.text])).toEqual([
      ["prompt_context", "Files mentioned: Demo Prep.vtt, notes.md"],
      ["post", "summarize the action items for the demo\n"],
      ["text", "Action items: …"],
      ["turn_end", "Turn complete"],
      ["prompt_context", "IDE context: Active file: src/config.ts"],
      ["post", "why is the threshold 0.8?"],
      ["text", "Because …"],
      ["turn_end", "Turn complete"],
    ]);
    expect(items[0]!.metadata).toMatchObject({
      detail:
        "# Files mentioned by the user:\n\n## Demo Prep.vtt: /Users/dev/Downloads/Demo Prep.vtt\n\n## notes.md: /Users/dev/notes.md",
    });
  });

  let deep = '"bottom"';
  for (let i = 0; i < 100_000; i++) deep = `[${deep}]`;
  it.each<[string, string, string]>([
    [
      "a line count no output has",
      "Wall time: 0.1 seconds\nOutput:\nTotal output lines: 99999999999999999999\n\nok",
      "Total output lines: 99999999999999999999\n\nok",
    ],
    [
      "MCP blocks nested 100,000 deep",
      `Wall time: 0.1 seconds\nOutput:\n[{"type":"text","text":${deep}}]`,
      "",
    ],
    [
      "an MCP list holding a number",
      'Wall time: 0.1 seconds\nOutput:\n[{"type":"text","text":"a"},7]',
      '[{"type":"text","text":"a"},7]',
    ],
    [
      "MCP JSON cut off",
      'Wall time: 0.1 seconds\nOutput:\n[{"type":"text","text":"a',
      '[{"type":"text","text":"a',
    ],
    [
      "a header of 10,000 lines",
      `${"Wall time: 0.1 seconds\n".repeat(10_000)}Output:\nok`,
      `${"Wall time: 0.1 seconds\n".repeat(10_000)}Output:\nok`,
    ],
    [
      "an exit code that is not a number",
      "Chunk ID: 1\nProcess exited with code x\nOutput:\nok",
      "Chunk ID: 1\nProcess exited with code x\nOutput:\nok",
    ],
  ])("reads a hostile output, %s, as text and goes on", (_, text, shown) => {
    const { items, problems } = convertCodexRollout([exec("call_h", "x"), output("call_h", text)].join("\n"));
    expect(problems).toEqual([]);
    expect(results(items).map(([, isError, , out]) => [isError, out])).toEqual([[false, shown]]);
    for (const item of items) expect(isThreadItem(item)).toBe(true);
  });

  it.each<[string, string]>([
    ["a skill of 1 MB", `<skill>\n<name>big</name>\n${"x".repeat(1_000_000)}\n</skill>`],
    ["a subagent notification that is not JSON", "<subagent_notification>\n{oops\n</subagent_notification>"],
    ["a desktop prompt without its request heading", "# Files mentioned by the user:\n\n## a.txt: /a.txt\n"],
    ["an unclosed contextual fragment", "<environment_context>\n<cwd>/repo</cwd>"],
  ])("converts a hostile user message, %s, into valid items", (_, text) => {
    const { items, problems } = convertCodexRollout([promptItem(text), said("ok")].join("\n"));
    expect(problems).toEqual([]);
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) expect(isThreadItem(item)).toBe(true);
  });

  it("shows a command the user ran with ! as a status, not as an agent's tool call", () => {
    const jsonl = line("event_msg", {
      type: "exec_command_end",
      call_id: "",
      turn_id: TURN,
      command: ["/bin/zsh", "-lc", "git status --short"],
      source: "user_shell",
      aggregated_output: " M src/config.ts\n",
      exit_code: 0,
      status: "completed",
    });
    expect(convertCodexRollout(jsonl).items).toEqual([
      {
        content: [{ type: "text", text: "User shell command: $ git status --short" }],
        metadata: {
          type: "status",
          status: "user_shell_command",
          detail: "$ git status --short\n M src/config.ts\n",
        },
      },
    ]);
  });
});
