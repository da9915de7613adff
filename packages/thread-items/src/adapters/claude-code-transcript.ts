import { statusItem } from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import {
  assistantItems,
  compactionDetail,
  contentText,
  interruption,
  promptItems,
  type TypedTextAs,
  userParts,
  withIds,
} from "./anthropic-content.js";
import { QueuedPrompts } from "./claude-code-queue.js";
import { type LineConverter, lineConverter, RecordProblem } from "./conversion.js";
import { injectedText } from "./injected-text.js";
import { type Fields, object, statusDetail } from "./record-fields.js";
import { anthropicUsage, TurnTracker } from "./turn-tracker.js";

/** Options of {@link createClaudeCodeTranscriptConverter}. */
export interface ClaudeCodeTranscriptOptions {
  /** Turn what the human typed into plain posts. Default true; a worker that posts prompts itself turns it off. */
  includeUserPrompts?: boolean;
}

/** A `system` record: compaction, the turn's duration, API errors, local commands, failed stop hooks. */
function systemItems(record: Fields, turn: TurnTracker): ThreadItem[] {
  switch (record.subtype) {
    case "compact_boundary": {
      const detail = compactionDetail(record.compactMetadata ?? record.compact_metadata);
      return withIds(
        [
          statusItem({
            status: "context_compacted",
            ...(detail ? { detail } : {}),
            brief: "Context compacted",
          }),
        ],
        record.uuid,
      );
    }
    case "turn_duration": {
      const duration = record.durationMs ?? record.duration_ms;
      return turn.close({
        ...(typeof duration === "number" ? { durationMs: duration } : {}),
        at: record.timestamp,
      });
    }
    case "api_error": {
      const error = object(record.error);
      const detail =
        typeof error?.message === "string"
          ? error.message
          : typeof record.content === "string"
            ? record.content
            : undefined;
      return withIds(
        [statusItem({ status: "api_error", ...(detail ? { detail: statusDetail(detail) } : {}) })],
        record.uuid,
      );
    }
    case "local_command": {
      // Newer versions write the command echo and its output as system records.
      const injected = typeof record.content === "string" ? injectedText(record.content) : undefined;
      return injected && injected !== "skip" ? withIds([statusItem(injected)], record.uuid) : [];
    }
    case "stop_hook_summary": {
      const errors = Array.isArray(record.hookErrors) ? record.hookErrors.map(String) : [];
      if (errors.length === 0) return [];
      return withIds(
        [statusItem({ status: "hook_failed", detail: statusDetail(errors.join("\n")) })],
        record.uuid,
      );
    }
    default:
      return [];
  }
}

/**
 * An incremental converter of a Claude Code transcript (`<sessionId>.jsonl`), one line at a time.
 * `user`, `assistant` and `system` records become items; text the harness injected into user
 * records (slash commands, command output, task notifications, system reminders, the IDE's
 * context), block by block, becomes status items, never posts, and so does a subagent's prompt;
 * messages typed while the agent worked are posted when the queue hands them to the model
 * mid-turn (`queue-operation` `remove`, `queued_command` attachments). Other record
 * types (summaries, file-history snapshots, progress, titles, and types not invented yet) are
 * skipped; unknown fields are ignored; a line that is not JSON, or a known record of the wrong
 * shape, is reported in `problems` and skipped. Pass it to `convertTranscript` for a whole file.
 */
export function createClaudeCodeTranscriptConverter(
  options: ClaudeCodeTranscriptOptions = {},
): LineConverter {
  const includeUserPrompts = options.includeUserPrompts ?? true;
  const turn = new TurnTracker();
  const queue = new QueuedPrompts();
  let sessionId: string | undefined;

  /** A prompt (typed, or injected by the harness) starts a turn, ending the one before it. */
  function startTurn(timestamp: unknown): ThreadItem[] {
    const ended = turn.close();
    turn.begin(timestamp);
    queue.settle();
    return ended;
  }

  /**
   * What a user message's text blocks become: statuses for what the harness injected, and a post
   * for what the human typed. In a subagent's transcript (`isSidechain`) nobody typed anything:
   * the main agent (or the harness: `Warmup`) wrote the prompt.
   */
  function prompt(texts: readonly string[], uuid: unknown, sidechain = false): ThreadItem[] {
    const typedAs: TypedTextAs = sidechain
      ? { status: "subagent_prompt" }
      : includeUserPrompts
        ? "post"
        : "nothing";
    return promptItems(texts, uuid, typedAs);
  }

  function user(record: Fields): ThreadItem[] {
    const message = object(record.message);
    if (!message) throw new RecordProblem("user record has no message object");
    // Meta lines (command caveats, injected context) and compaction summaries are not what anyone typed.
    if (record.isMeta === true || record.isCompactSummary === true) return [];
    const { results, texts } = userParts(message.content, "user record", record.toolUseResult);
    if (results.length > 0) {
      turn.activity(record.timestamp);
      return withIds(results, record.uuid);
    }
    const text = texts.join("\n");
    if (text.trim() === "") return [];
    const interrupted = interruption(text, record.uuid);
    if (interrupted) {
      turn.activity(record.timestamp);
      return interrupted;
    }
    const sidechain = record.isSidechain === true;
    if (!sidechain) queue.delivered(texts);
    return [...startTurn(record.timestamp), ...prompt(texts, record.uuid, sidechain)];
  }

  function assistant(record: Fields): ThreadItem[] {
    const message = object(record.message);
    if (!message) throw new RecordProblem("assistant record has no message object");
    turn.activity(record.timestamp);
    // Every content block is its own line, each repeating the message's usage: count it once per id.
    turn.callUsage(
      typeof message.id === "string" ? message.id : String(record.uuid),
      anthropicUsage(message.usage),
    );
    if (record.isApiErrorMessage === true) {
      const detail = statusDetail(contentText(message.content));
      return withIds([statusItem({ status: "api_error", detail })], record.uuid);
    }
    return withIds(assistantItems(message.content, "assistant record"), record.uuid);
  }

  /** A message typed while the agent worked, handed to the model mid-turn. */
  function consumed(text: string | undefined): ThreadItem[] {
    if (text === undefined || text.trim() === "") return [];
    return prompt([text], undefined);
  }

  return lineConverter({
    record(record) {
      if (typeof record.type !== "string") throw new RecordProblem("record has no string type");
      if (sessionId === undefined && typeof record.sessionId === "string") sessionId = record.sessionId;
      switch (record.type) {
        case "user":
          return user(record);
        case "assistant":
          return assistant(record);
        case "system":
          return systemItems(record, turn);
        case "queue-operation":
          return consumed(queue.operation(record));
        case "attachment": {
          const attachment = object(record.attachment);
          if (attachment?.type !== "queued_command" || typeof attachment.prompt !== "string") return [];
          return consumed(queue.attachment(attachment.prompt));
        }
        default:
          return [];
      }
    },
    end: () => turn.close(),
    sessionId: () => sessionId,
  });
}
