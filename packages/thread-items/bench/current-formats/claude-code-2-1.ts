import { Prng } from "../../test/fixture-generators/prng.js";
import { CWD, PROJECT_FILES } from "../../test/fixture-generators/project-text.js";
import type { ToolStep } from "../../test/fixture-generators/session-script.js";
import {
  type AnthropicCall,
  anthropicCalls,
  assistantMessage,
  BASE62,
  BASE64,
  benchSession,
} from "./shared.js";

type Json = Record<string, unknown>;

const VERSION = "2.1.7";

/** What Claude Code 2.1 writes in `toolUseResult` beside each tool_result: the tool's own output object. */
function toolUseResult(random: Prng, step: ToolStep): unknown {
  const { name, input } = step.claude;
  if (step.isError) return `Error: ${step.output}`;
  switch (name) {
    case "Bash":
      return { stdout: step.output, stderr: "", interrupted: false, isImage: false };
    case "Read": {
      const lines = step.output.split("\n").length;
      return {
        type: "text",
        file: {
          filePath: input.file_path,
          content: step.output,
          numLines: lines,
          startLine: 1,
          totalLines: lines,
        },
      };
    }
    case "Grep":
      return {
        mode: "content",
        numFiles: 2,
        filenames: [],
        content: step.output,
        numLines: step.output.split("\n").length,
      };
    case "Glob":
      return {
        filenames: step.output.split("\n"),
        durationMs: random.int(5, 90),
        numFiles: 6,
        truncated: false,
      };
    case "Edit":
      // Claude Code keeps the whole file it edited: Edit lines are the largest of a transcript.
      return {
        filePath: input.file_path,
        oldString: input.old_string,
        newString: input.new_string,
        originalFile: PROJECT_FILES["src/prefix.ts"],
        structuredPatch: [
          {
            oldStart: 2,
            oldLines: 1,
            newStart: 2,
            newLines: 1,
            lines: [`-${input.old_string}`, `+${input.new_string}`],
          },
        ],
        userModified: false,
        replaceAll: false,
      };
    case "Write":
      return { type: "create", filePath: input.file_path, content: input.content, structuredPatch: [] };
    case "TodoWrite":
      return { oldTodos: [], newTodos: input.todos };
    case "Task":
      return {
        status: "completed",
        prompt: input.prompt,
        agentId: random.chars(7),
        content: [{ type: "text", text: step.output }],
        totalDurationMs: random.int(20_000, 240_000),
        totalTokens: random.int(20_000, 90_000),
        totalToolUseCount: random.int(3, 30),
        usage: {
          input_tokens: 7,
          cache_creation_input_tokens: 18688,
          cache_read_input_tokens: 39048,
          output_tokens: 812,
        },
      };
    case "WebFetch":
      return {
        bytes: random.int(20_000, 200_000),
        code: 200,
        codeText: "OK",
        result: step.output,
        durationMs: random.int(300, 4000),
        url: input.url,
      };
    default:
      return step.output;
  }
}

/**
 * A Claude Code 2.1 transcript (`<sessionId>.jsonl`) of `turnCount` turns, with the lines and
 * fields real 2.1.x transcripts hold: file-history snapshots, prompts with the IDE's context
 * block, one assistant line per content block (usage repeated), `progress` lines while a shell
 * command or a subagent runs, tool results with `toolUseResult`, queued messages, stop-hook
 * summaries and `turn_duration`.
 */
export function claudeCode21Transcript(turnCount: number): string {
  const random = new Prng(2107);
  const turns = benchSession(random, turnCount);
  const sessionId = random.uuid();
  const lines: string[] = [];
  let clock = Date.parse("2026-01-14T19:20:03.207Z");
  let parentUuid: string | null = null;
  const push = (record: Json) => lines.push(JSON.stringify(record));
  const tick = () => {
    clock += random.int(40, 4000);
    return new Date(clock).toISOString();
  };
  const record = (type: string, fields: Json): Json => {
    const uuid = random.uuid();
    const line = {
      parentUuid,
      isSidechain: false,
      userType: "external",
      cwd: CWD,
      sessionId,
      version: VERSION,
      gitBranch: "fix/owner-prefix",
      slug: "adaptive-imagining-grove",
      type,
      ...fields,
      uuid,
      timestamp: tick(),
    };
    parentUuid = uuid;
    return line;
  };
  const nextCall = anthropicCalls(random, "msg_bdrk_");
  let call: AnthropicCall = nextCall();
  const assistant = (block: Json) =>
    push(
      record("assistant", {
        message: assistantMessage(call, block),
        requestId: `req_${random.chars(24, BASE62)}`,
      }),
    );

  turns.forEach((turn, index) => {
    const promptId = random.uuid();
    push({
      type: "file-history-snapshot",
      messageId: promptId,
      snapshot: { messageId: promptId, trackedFileBackups: {}, timestamp: new Date(clock).toISOString() },
      isSnapshotUpdate: false,
    });
    const content =
      index % 3 === 1
        ? [
            {
              type: "text",
              text: `<ide_opened_file>The user opened the file ${CWD}/src/prefix.ts in the IDE. This may or may not be related to the current task.</ide_opened_file>`,
            },
            { type: "text", text: turn.prompt },
          ]
        : turn.prompt;
    push(
      record("user", {
        message: { role: "user", content },
        thinkingMetadata: { level: "high", disabled: false, triggers: [] },
        todos: [],
        permissionMode: "default",
      }),
    );
    call = nextCall();
    turn.steps.forEach((step, stepIndex) => {
      if (step.kind === "thinking") {
        assistant({ type: "thinking", thinking: step.text, signature: random.chars(560, BASE64) });
        return;
      }
      if (step.kind === "text") {
        assistant({ type: "text", text: step.text });
        return;
      }
      const id = `toolu_bdrk_${random.chars(24, BASE62)}`;
      assistant({ type: "tool_use", id, name: step.claude.name, input: step.claude.input });
      const assistantUuid = parentUuid;
      if (step.claude.name === "Bash") {
        for (let second = 1; second <= 2; second++) {
          push(
            record("progress", {
              data: {
                type: "bash_progress",
                output: step.output.slice(0, 200 * second),
                fullOutput: step.output.slice(0, 200 * second),
                elapsedTimeSeconds: second,
                totalLines: second * 4,
              },
              toolUseID: `bash-progress-${second}`,
              parentToolUseID: id,
            }),
          );
        }
      }
      if (step.claude.name === "Task") {
        push(
          record("progress", {
            data: {
              type: "agent_progress",
              prompt: step.claude.input.prompt,
              agentId: random.chars(7),
              message: {
                type: "assistant",
                message: {
                  model: "claude-haiku-4-5-20251001",
                  id: `msg_bdrk_${random.chars(24, BASE62)}`,
                  type: "message",
                  role: "assistant",
                  content: [
                    {
                      type: "tool_use",
                      id: `toolu_${random.chars(20)}`,
                      name: "Grep",
                      input: { pattern: "parseToken" },
                    },
                  ],
                  usage: call.usage,
                },
              },
            },
            toolUseID: `agent_msg_${random.chars(12)}`,
            parentToolUseID: id,
          }),
        );
      }
      // A message typed while the agent works, handed to the model mid-turn.
      if (index % 4 === 2 && stepIndex === 2) {
        const typed = "also keep the README in sync";
        push({ type: "queue-operation", operation: "enqueue", timestamp: tick(), sessionId, content: typed });
        push({ type: "queue-operation", operation: "remove", timestamp: tick(), sessionId, content: typed });
        push(
          record("attachment", {
            attachment: { type: "queued_command", prompt: typed, commandMode: "prompt" },
          }),
        );
      }
      push(
        record("user", {
          message: {
            role: "user",
            content: [
              {
                tool_use_id: id,
                type: "tool_result",
                content: step.output,
                ...(step.isError ? { is_error: true } : {}),
              },
            ],
          },
          toolUseResult: toolUseResult(random, step),
          sourceToolAssistantUUID: assistantUuid,
        }),
      );
      call = nextCall();
    });
    assistant({ type: "text", text: turn.answer });
    push(
      record("system", {
        subtype: "stop_hook_summary",
        hookCount: 1,
        hookInfos: [{ command: "prettier --check ." }],
        hookErrors: [],
        preventedContinuation: false,
        stopReason: "",
        hasOutput: false,
        level: "suggestion",
        toolUseID: random.uuid(),
      }),
    );
    push(
      record("system", { subtype: "turn_duration", durationMs: random.int(8_000, 600_000), isMeta: false }),
    );
  });
  return lines.join("\n");
}
