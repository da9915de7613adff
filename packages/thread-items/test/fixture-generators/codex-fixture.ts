import { type ExpectedSession, emptyExpected } from "./expected.js";
import type { Prng } from "./prng.js";
import { CWD } from "./project-text.js";
import type { Turn } from "./session-script.js";

type Json = Record<string, unknown>;

const USER_INSTRUCTIONS =
  "<user_instructions>\n\n# AGENTS.md\n\n- Run `npm test` before saying a change is done.\n- Keep functions small; no default exports.\n\n</user_instructions>";
const ENVIRONMENT = `<environment_context>\n  <cwd>${CWD}</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>bash</shell>\n</environment_context>`;

/**
 * Renders a session script as a Codex CLI rollout (`rollout-<time>-<uuid>.jsonl`): `session_meta`,
 * `turn_context`, `response_item`s, and the `event_msg`s Codex writes beside them (copies of
 * messages, cumulative `token_count`s, task start and end).
 */
export function codexRollout(random: Prng, turns: Turn[]): { jsonl: string; expected: ExpectedSession } {
  const sessionId = random.uuid();
  const lines: string[] = [];
  const expected = emptyExpected(sessionId);
  let clock = Date.parse("2025-11-04T14:03:11.027Z");
  const tick = (min: number, max: number) => {
    clock += random.int(min, max);
    return new Date(clock).toISOString();
  };
  const push = (type: string, payload: Json, timestamp = tick(5, 400)) =>
    lines.push(JSON.stringify({ timestamp, type, payload }));
  const totals = {
    input_tokens: 0,
    cached_input_tokens: 0,
    output_tokens: 0,
    reasoning_output_tokens: 0,
    total_tokens: 0,
  };
  let context = 8_400;
  const modelCall = () => {
    const input = context + random.int(200, 2_500);
    const cached = Math.min(input, context - random.int(0, 600));
    const output = random.int(30, 1_200);
    const reasoning = random.int(0, output);
    context = input + output;
    const last = {
      input_tokens: input,
      cached_input_tokens: Math.max(0, cached),
      output_tokens: output,
      reasoning_output_tokens: reasoning,
      total_tokens: input + output,
    };
    for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += last[key];
    push("event_msg", {
      type: "token_count",
      info: { total_token_usage: { ...totals }, last_token_usage: last, model_context_window: 272_000 },
      rate_limits: {
        primary: {
          used_percent: random.int(1, 40),
          window_minutes: 299,
          resets_in_seconds: random.int(100, 17_000),
        },
        secondary: {
          used_percent: random.int(1, 20),
          window_minutes: 10079,
          resets_in_seconds: random.int(10_000, 600_000),
        },
      },
    });
  };

  const start = new Date(clock).toISOString();
  push(
    "session_meta",
    {
      id: sessionId,
      timestamp: start,
      cwd: CWD,
      originator: "codex_cli_rs",
      cli_version: "0.46.0",
      instructions: null,
      source: "cli",
      model_provider: "openai",
      git: {
        commit_hash: random.chars(40),
        branch: "fix/owner-prefix",
        repository_url: "git@github.com:example/query-tokenizer.git",
      },
    },
    start,
  );
  push("response_item", {
    type: "message",
    role: "user",
    content: [{ type: "input_text", text: USER_INSTRUCTIONS }],
  });
  push("response_item", {
    type: "message",
    role: "user",
    content: [{ type: "input_text", text: ENVIRONMENT }],
  });

  for (const turn of turns) {
    if (turn.compactedBefore) {
      push("compacted", {
        message:
          "Summary of the conversation so far: the user is fixing prefix parsing in the query tokenizer…",
      });
      context = 8_400;
    }
    const before = { ...totals };
    const startedAt = tick(4_000, 90_000);
    push(
      "turn_context",
      {
        cwd: CWD,
        approval_policy: "on-request",
        sandbox_policy: {
          mode: "workspace-write",
          network_access: false,
          exclude_tmpdir_env_var: false,
          exclude_slash_tmp: false,
        },
        model: "gpt-5-codex",
        effort: "medium",
        summary: "auto",
      },
      startedAt,
    );
    push("event_msg", { type: "task_started", model_context_window: 272_000 }, startedAt);
    const content: Json[] = [{ type: "input_text", text: turn.prompt }];
    if (turn.image) {
      content.push({ type: "input_image", image_url: `data:image/png;base64,${turn.image}` });
      expected.images++;
    }
    push("response_item", { type: "message", role: "user", content });
    push("event_msg", {
      type: "user_message",
      message: turn.prompt,
      kind: "plain",
      ...(turn.image ? { images: [`data:image/png;base64,${turn.image}`] } : {}),
    });

    const steps = turn.interrupted ? turn.steps.slice(0, Math.ceil(turn.steps.length / 2)) : turn.steps;
    let pendingCall = false;
    for (const step of steps) {
      if (step.kind === "thinking") {
        const summary = `**Checking the prefix list**\n\n${step.text}`;
        push("response_item", {
          type: "reasoning",
          summary: [{ type: "summary_text", text: summary }],
          content: null,
          encrypted_content: `gAAAAA${random.chars(180, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")}`,
        });
        push("event_msg", { type: "agent_reasoning", text: summary });
        pendingCall = true;
        continue;
      }
      if (step.kind === "text") {
        push("response_item", {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: step.text }],
        });
        push("event_msg", { type: "agent_message", message: step.text });
        pendingCall = true;
        continue;
      }
      const callId = `call_${random.chars(24, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")}`;
      expected.toolCalls++;
      if (step.codex.type === "web_search_call") {
        // Web searches run on OpenAI's side: no id and no output line. A completed one is shown as a
        // call with an empty result.
        push("response_item", { type: "web_search_call", status: "completed", action: step.codex.input });
        expected.toolResults++;
        modelCall();
        pendingCall = false;
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
      } else {
        push("response_item", {
          type: "function_call",
          name: step.codex.name,
          arguments: JSON.stringify(step.codex.input),
          call_id: callId,
        });
      }
      modelCall();
      pendingCall = false;
      const output =
        step.codex.name === "view_image"
          ? "attached local image path"
          : step.codex.name === "apply_patch"
            ? patchSummary(String(step.codex.input))
            : step.output;
      const envelope = JSON.stringify({
        output,
        metadata: { exit_code: step.isError ? 1 : 0, duration_seconds: random.int(1, 9000) / 1000 },
      });
      const type =
        step.codex.type === "custom_tool_call" ? "custom_tool_call_output" : "function_call_output";
      push(
        "response_item",
        { type, call_id: callId, output: envelope },
        tick(100, output.length > 100_000 ? 40_000 : 4_000),
      );
      expected.toolResults++;
    }
    if (turn.interrupted) {
      if (pendingCall) modelCall();
      const endedAt = tick(500, 3000);
      push("event_msg", { type: "turn_aborted", reason: "interrupted" }, endedAt);
      expected.turns.push(turnStats(before, totals, Date.parse(endedAt) - Date.parse(startedAt)));
      continue;
    }
    push("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: turn.answer }],
    });
    push("event_msg", { type: "agent_message", message: turn.answer });
    modelCall();
    const endedAt = tick(5, 100);
    push("event_msg", { type: "task_complete", last_agent_message: turn.answer }, endedAt);
    expected.turns.push(turnStats(before, totals, Date.parse(endedAt) - Date.parse(startedAt)));
  }
  return { jsonl: `${lines.join("\n")}\n`, expected };
}

function turnStats(before: Record<string, number>, after: Record<string, number>, durationMs: number) {
  return {
    input_tokens: after.input_tokens! - before.input_tokens!,
    input_tokens_cached: after.cached_input_tokens! - before.cached_input_tokens!,
    output_tokens: after.output_tokens! - before.output_tokens!,
    duration_ms: durationMs,
  };
}

// What Codex's apply_patch reports: one `A`/`M`/`D` line per file the patch touched.
function patchSummary(patch: string): string {
  const letters: Record<string, string> = { Add: "A", Update: "M", Delete: "D" };
  const files = [...patch.matchAll(/^\*\*\* (Add|Update|Delete) File: (.+)$/gm)].map(
    (match) => `${letters[match[1]!]} ${match[2]}`,
  );
  return `Success. Updated the following files:\n${files.join("\n")}\n`;
}
