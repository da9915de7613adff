import { seededRandom } from "@stowage/core/testing";

/**
 * Sessions of the other two agents for the bench, in the shapes their CLIs write (see the
 * sessions README): a Codex rollout (`{ timestamp, type, payload }` lines) and an OpenCode
 * export (`{ info, messages: [{ info, parts }] }`). Contents vary like real work: prose, code,
 * command output, so that compression ratios are not flattered by repetition.
 */

const WORDS =
  "the handler validates the request body before it touches the database so the bug must be in the parser after the change the suite passes locally I also ran the type checker and the linter next I will update the changelog and open a pull request with a short description of the fix module cannot be resolved which usually means the import path is wrong or the build output is stale".split(
    " ",
  );
const NAMES = [
  "session",
  "request",
  "handler",
  "store",
  "cache",
  "token",
  "config",
  "payload",
  "record",
  "stream",
];

/** Consecutive words from a random start: prose repeats phrases the way a working session does. */
function text(random: () => number, words: number): string {
  const start = Math.floor(random() * WORDS.length);
  return Array.from({ length: words }, (_, i) => WORDS[(start + i) % WORDS.length]).join(" ");
}

function code(random: () => number, lines: number): string {
  return Array.from({ length: lines }, (_, i) => {
    const name = NAMES[Math.floor(random() * NAMES.length)]!;
    const n = Math.floor(random() * 10_000);
    return i % 4 === 0
      ? `export async function load${name}${n}(${name}: string) {`
      : i % 4 === 3
        ? "}"
        : `  const ${name}${n} = await fetch${name}(${name}, { retries: ${n % 7} }); // ${text(random, 6)}`;
  }).join("\n");
}

/**
 * A Codex rollout of about `targetBytes` made of real rollout lines (`realLines`, from the real
 * transcripts): the first `session_meta` with this session's id, then the other lines over and
 * over. Each pass is longer than gzip's and brotli's windows, so the repetition cannot flatter
 * either; the ratios stay those of the real file.
 */
export function codexRolloutFromReal(
  sessionId: string,
  targetBytes: number,
  realLines: readonly string[],
): string {
  const meta = realLines.find((line) => line.includes('"type":"session_meta"'));
  const rest = realLines.filter((line) => line !== meta && line.trim() !== "");
  const record = JSON.parse(meta ?? '{"type":"session_meta","payload":{}}');
  record.payload.id = sessionId;
  const lines = [JSON.stringify(record)];
  let size = lines[0]!.length;
  for (let i = 0; size < targetBytes; i++) {
    const line = rest[i % rest.length]!;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

/** A Codex rollout of about `targetBytes`: session meta, turn contexts, messages, reasoning, shell calls and their output. */
export function codexRollout(sessionId: string, targetBytes: number, seed = 1): string {
  const random = seededRandom(seed);
  const lines: string[] = [];
  let size = 0;
  let clock = Date.parse("2026-11-23T04:00:00.000Z");
  const push = (type: string, payload: unknown) => {
    clock += Math.floor(random() * 4000);
    const line = JSON.stringify({ timestamp: new Date(clock).toISOString(), type, payload });
    lines.push(line);
    size += line.length + 1;
  };
  push("session_meta", {
    id: sessionId,
    timestamp: new Date(clock).toISOString(),
    cwd: "/workspace/app",
    originator: "codex_exec",
    cli_version: "0.169.0",
    source: "exec",
    model_provider: "openai",
    base_instructions: { text: text(random, 1500) },
  });
  for (let turn = 0; size < targetBytes; turn++) {
    push("turn_context", {
      cwd: "/workspace/app",
      approval_policy: "never",
      model: "gpt-5",
      effort: "medium",
    });
    const prompt = text(random, 20 + Math.floor(random() * 60));
    push("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: prompt }] });
    push("event_msg", { type: "user_message", message: prompt, images: [] });
    for (let call = 0; call < 1 + Math.floor(random() * 4); call++) {
      push("response_item", {
        type: "reasoning",
        summary: [{ type: "summary_text", text: text(random, 40) }],
        encrypted_content: null,
      });
      const callId = `call_${turn}_${call}_${Math.floor(random() * 1e9).toString(36)}`;
      push("response_item", {
        type: "function_call",
        name: "shell",
        arguments: JSON.stringify({
          command: ["bash", "-lc", `sed -n 1,${40 + call * 20}p src/${NAMES[call % NAMES.length]}.ts`],
        }),
        call_id: callId,
      });
      push("response_item", {
        type: "function_call_output",
        call_id: callId,
        output: JSON.stringify({
          output: code(random, 20 + Math.floor(random() * 120)),
          metadata: { exit_code: 0, duration_seconds: random() },
        }),
      });
    }
    push("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: text(random, 60) }],
    });
    push("event_msg", {
      type: "token_count",
      info: {
        total_token_usage: {
          input_tokens: turn * 4000,
          cached_input_tokens: turn * 3000,
          output_tokens: turn * 300,
        },
      },
    });
  }
  return `${lines.join("\n")}\n`;
}

/** What `opencode export` prints for a session of `messages` messages, alternating user and assistant with tool parts. */
export function opencodeExport(sessionId: string, messages: number, seed = 2): string {
  const random = seededRandom(seed);
  let clock = 1_795_406_490_570;
  const id = (prefix: string) =>
    `${prefix}_${(clock++).toString(16)}${Math.floor(random() * 1e12).toString(36)}`;
  const list = Array.from({ length: messages }, (_, i) => {
    const messageId = id("msg");
    const user = i % 2 === 0;
    const part = (extra: Record<string, unknown>) => ({
      id: id("prt"),
      sessionID: sessionId,
      messageID: messageId,
      ...extra,
    });
    return {
      info: user
        ? {
            role: "user",
            time: { created: clock },
            agent: "build",
            model: { providerID: "anthropic", modelID: "claude-sonnet-4-5" },
            id: messageId,
            sessionID: sessionId,
          }
        : {
            role: "assistant",
            time: { created: clock, completed: clock + 900 },
            parentID: messageId,
            modelID: "claude-sonnet-4-5",
            providerID: "anthropic",
            mode: "build",
            agent: "build",
            finish: "stop",
            path: { cwd: "/workspace/app", root: "/workspace/app" },
            cost: 0.01,
            tokens: { input: 4000, output: 300, reasoning: 0, cache: { read: 3000, write: 0 } },
            id: messageId,
            sessionID: sessionId,
          },
      parts: user
        ? [part({ type: "text", text: text(random, 20 + Math.floor(random() * 60)) })]
        : [
            part({ type: "step-start" }),
            part({ type: "reasoning", text: text(random, 40), time: { start: clock, end: clock + 300 } }),
            part({
              type: "tool",
              callID: id("toolu"),
              tool: "read",
              state: {
                status: "completed",
                input: { filePath: `/workspace/app/src/${NAMES[i % NAMES.length]}.ts` },
                output: code(random, 20 + Math.floor(random() * 200)),
                title: "read",
                metadata: {},
                time: { start: clock, end: clock + 40 },
              },
            }),
            part({ type: "text", text: text(random, 60) }),
            part({
              type: "step-finish",
              reason: "stop",
              cost: 0.01,
              tokens: { input: 4000, output: 300, reasoning: 0, cache: { read: 3000, write: 0 } },
            }),
          ],
    };
  });
  const info = {
    id: sessionId,
    slug: "lucky-falcon",
    projectID: "global",
    directory: "/workspace/app",
    title: "Fix the parser",
    version: "1.18.33",
    time: { created: 1_795_406_490_570, updated: clock },
  };
  return JSON.stringify({ info, messages: list }, null, 2);
}
