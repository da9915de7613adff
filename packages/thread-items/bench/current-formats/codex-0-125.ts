import { Prng } from "../../test/fixture-generators/prng.js";
import { CWD } from "../../test/fixture-generators/project-text.js";
import type { ToolStep } from "../../test/fixture-generators/session-script.js";
import { BASE62, benchSession } from "./shared.js";

type Json = Record<string, unknown>;

const BASE64URL = `${BASE62}-_`;
const INSTRUCTIONS =
  "You are Codex, a coding agent based on GPT-5. You and the user share one workspace, and your job is to collaborate with them until their goal is genuinely handled.\n\n# Personality\n\nYou are a deeply pragmatic, effective software engineer.\n".repeat(
    40,
  );
/** Lines of output above which Codex cuts the output it gives the model, with its note. */
const CUT_ABOVE_LINES = 60;

/** The command a shell step runs, as `exec_command` takes it. */
const commandOf = (step: ToolStep): string => {
  const input = step.codex.input as { command?: string[] };
  return input.command?.at(-1) ?? step.codex.name;
};

/** Codex's header above an exec_command output, with its truncation note when the output is long. */
function headed(random: Prng, output: string, exitCode: number): string {
  const lines = output.split("\n");
  const body =
    lines.length > CUT_ABOVE_LINES
      ? `Total output lines: ${lines.length}\n\n${lines.slice(0, 30).join("\n")}\n…${random.int(200, 4000)} tokens truncated…\n${lines.slice(-20).join("\n")}`
      : output;
  return `Chunk ID: ${random.chars(6)}\nWall time: ${random.int(0, 4)}.${random.chars(4, "0123456789")} seconds\nProcess exited with code ${exitCode}\nOriginal token count: ${Math.ceil(output.length / 4)}\nOutput:\n${body}`;
}

/**
 * A Codex CLI 0.125 rollout of `turnCount` turns, with the lines and fields real 0.125 rollouts
 * hold: a session_meta with the base instructions, a turn_context per turn, task events,
 * prompts written twice, encrypted reasoning with summaries, `exec_command` calls whose outputs
 * carry Codex's header (and its truncation note when long), `exec_command_end` events with the
 * whole output, commands still running when their output was recorded, patches with
 * `patch_apply_end`, web searches, `token_count` events with rate limits.
 */
export function codex125Rollout(turnCount: number): string {
  const random = new Prng(125);
  const turns = benchSession(random, turnCount);
  const sessionId = "019e1625-789d-76c0-80ab-3724b5ddb799";
  const lines: string[] = [];
  let clock = Date.parse("2026-05-11T08:26:55.042Z");
  const tick = () => {
    clock += random.int(30, 3000);
    return new Date(clock).toISOString();
  };
  const push = (type: string, payload: Json) =>
    lines.push(JSON.stringify({ timestamp: tick(), type, payload }));
  const totals = {
    input_tokens: 0,
    cached_input_tokens: 0,
    output_tokens: 0,
    reasoning_output_tokens: 0,
    total_tokens: 0,
  };
  const tokenCount = () => {
    const last = {
      input_tokens: random.int(18_000, 60_000),
      cached_input_tokens: random.int(10_000, 18_000),
      output_tokens: random.int(40, 900),
      reasoning_output_tokens: random.int(0, 300),
      total_tokens: 0,
    };
    last.total_tokens = last.input_tokens + last.output_tokens;
    for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += last[key];
    push("event_msg", {
      type: "token_count",
      info: { total_token_usage: { ...totals }, last_token_usage: last, model_context_window: 258400 },
      rate_limits: {
        limit_id: "codex",
        primary: { used_percent: random.int(1, 60), window_minutes: 300, resets_at: 1778500000 },
        secondary: { used_percent: random.int(1, 30), window_minutes: 10080, resets_at: 1779000000 },
        credits: null,
        plan_type: "plus",
      },
    });
  };

  push("session_meta", {
    id: sessionId,
    timestamp: new Date(clock).toISOString(),
    cwd: CWD,
    originator: "codex-tui",
    cli_version: "0.125.0",
    source: "cli",
    model_provider: "openai",
    base_instructions: { text: INSTRUCTIONS },
    git: {
      commit_hash: random.chars(40),
      branch: "fix/owner-prefix",
      repository_url: "git@github.com:dev/query-tokenizer.git",
    },
  });
  turns.forEach((turn, index) => {
    const turnId = random.uuid();
    push("event_msg", {
      type: "task_started",
      turn_id: turnId,
      started_at: Math.floor(clock / 1000),
      model_context_window: 258400,
      collaboration_mode_kind: "default",
    });
    if (index === 0) {
      push("response_item", {
        type: "message",
        role: "user",
        content: [
          {
            type: "input_text",
            text: `# AGENTS.md instructions for ${CWD}\n\n<INSTRUCTIONS>\nUse pnpm. Keep the tests green.\n</INSTRUCTIONS>`,
          },
          {
            type: "input_text",
            text: `<environment_context>\n  <cwd>${CWD}</cwd>\n  <shell>zsh</shell>\n</environment_context>`,
          },
        ],
      });
    }
    push("turn_context", {
      turn_id: turnId,
      cwd: CWD,
      current_date: "2026-05-11",
      timezone: "Europe/Vilnius",
      approval_policy: "on-request",
      sandbox_policy: {
        type: "workspace-write",
        writable_roots: [],
        network_access: false,
        exclude_tmpdir_env_var: false,
        exclude_slash_tmp: false,
      },
      model: "gpt-5.5",
      effort: "medium",
      summary: "auto",
      truncation_policy: { mode: "tokens", limit: 10000 },
    });
    push("response_item", {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: turn.prompt }],
    });
    push("event_msg", {
      type: "user_message",
      message: turn.prompt,
      images: [],
      local_images: [],
      text_elements: [],
    });
    for (const step of turn.steps) {
      if (step.kind === "thinking") {
        push("event_msg", { type: "agent_reasoning", text: step.text });
        push("response_item", {
          type: "reasoning",
          summary: [{ type: "summary_text", text: step.text }],
          content: null,
          encrypted_content: `gAAAAA${random.chars(1400, BASE64URL)}`,
        });
        continue;
      }
      if (step.kind === "text") {
        push("event_msg", { type: "agent_message", message: step.text, phase: "commentary" });
        push("response_item", {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: step.text }],
          phase: "commentary",
        });
        continue;
      }
      const callId = `call_${random.chars(24, BASE62)}`;
      if (step.codex.type === "web_search_call") {
        const action = {
          type: "search",
          query: (step.codex.input as { query: string }).query,
          queries: [(step.codex.input as { query: string }).query],
        };
        const id = `ws_${random.chars(50)}`;
        push("event_msg", { type: "web_search_end", call_id: id, query: action.query, action });
        push("response_item", { type: "web_search_call", status: "completed", action });
        continue;
      }
      if (step.codex.type === "custom_tool_call") {
        push("response_item", {
          type: "custom_tool_call",
          status: "completed",
          call_id: callId,
          name: step.codex.name,
          input: step.codex.input,
        });
        push("event_msg", {
          type: "patch_apply_end",
          call_id: callId,
          turn_id: turnId,
          stdout: "Success. Updated the following files:\nM src/prefix.ts\n",
          stderr: "",
          success: true,
          changes: {
            [`${CWD}/src/prefix.ts`]: { type: "update", unified_diff: step.codex.input, move_path: null },
          },
          status: "completed",
        });
        push("response_item", {
          type: "custom_tool_call_output",
          call_id: callId,
          output: JSON.stringify({
            output: "Success. Updated the following files:\nM src/prefix.ts\n",
            metadata: { exit_code: 0, duration_seconds: 0.1 },
          }),
        });
        continue;
      }
      if (step.codex.name !== "shell") {
        push("response_item", {
          type: "function_call",
          name: step.codex.name,
          arguments: JSON.stringify(step.codex.input),
          call_id: callId,
        });
        push("response_item", { type: "function_call_output", call_id: callId, output: "Plan updated" });
        continue;
      }
      const cmd = commandOf(step);
      push("response_item", {
        type: "function_call",
        name: "exec_command",
        arguments: JSON.stringify({ cmd, workdir: CWD, yield_time_ms: 1000, max_output_tokens: 12000 }),
        call_id: callId,
      });
      tokenCount();
      const exitCode = step.isError ? 1 : 0;
      const end = {
        type: "exec_command_end",
        call_id: callId,
        process_id: String(random.int(10_000, 99_999)),
        turn_id: turnId,
        command: ["/bin/zsh", "-lc", cmd],
        cwd: CWD,
        parsed_cmd: [{ type: "unknown", cmd }],
        source: "unified_exec_startup",
        stdout: "",
        stderr: "",
        aggregated_output: step.output,
        exit_code: exitCode,
        duration: { secs: random.int(0, 4), nanos: random.int(0, 999_999_999) },
        formatted_output: step.output,
        status: step.isError ? "failed" : "completed",
      };
      if (random.chance(0.1)) {
        // Still running when its output was recorded: the exit comes in exec_command_end.
        push("response_item", {
          type: "function_call_output",
          call_id: callId,
          output: `Chunk ID: ${random.chars(6)}\nWall time: 1.0037 seconds\nProcess running with session ID ${end.process_id}\nOriginal token count: 0\nOutput:\n`,
        });
        push("event_msg", end);
      } else {
        push("event_msg", end);
        push("response_item", {
          type: "function_call_output",
          call_id: callId,
          output: headed(random, step.output, exitCode),
        });
      }
    }
    push("event_msg", { type: "agent_message", message: turn.answer, phase: "final_answer" });
    push("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: turn.answer }],
      phase: "final_answer",
    });
    tokenCount();
    push("event_msg", { type: "task_complete", turn_id: turnId, last_agent_message: turn.answer });
  });
  return lines.join("\n");
}
