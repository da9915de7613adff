import { plainPostItem, statusItem } from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { assistantItems, compactionDetail, contentText, userParts, withIds } from "./anthropic-content.js";
import {
  type ConversionResult,
  convertLines,
  type LineConverter,
  lineConverter,
  RecordProblem,
} from "./conversion.js";
import { anthropicUsage, TurnTracker } from "./turn-tracker.js";

export interface ClaudeCodeTranscriptOptions {
  /** Turn what the human typed into plain posts. Default true; a worker that posts prompts itself turns it off. */
  includeUserPrompts?: boolean;
}

type Record_ = Record<string, unknown>;

// What Claude Code writes in place of a reply when the user pressed Esc.
const INTERRUPTED = /^\[Request interrupted by user[^\]]*\]$/;

const object = (value: unknown): Record_ | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record_) : undefined;

/**
 * An incremental converter of a Claude Code transcript (`<sessionId>.jsonl`), one line at a time.
 * Record types other than `user`, `assistant` and `system` (summaries, file-history snapshots,
 * queue operations, progress, attachments, titles, and types not invented yet) are skipped;
 * unknown fields are ignored; a line that is not JSON, or a known record of the wrong shape, is
 * reported in `problems` and skipped.
 */
export function createClaudeCodeTranscriptConverter(
  options: ClaudeCodeTranscriptOptions = {},
): LineConverter {
  const includeUserPrompts = options.includeUserPrompts ?? true;
  const turn = new TurnTracker();
  let sessionId: string | undefined;

  function user(record: Record_): ThreadItem[] {
    const message = object(record.message);
    if (!message) throw new RecordProblem("user record has no message object");
    // Meta lines (command caveats, injected context) and compaction summaries are not what anyone typed.
    if (record.isMeta === true || record.isCompactSummary === true) return [];
    const { results, text } = userParts(message.content, "user record");
    if (results.length > 0) {
      turn.activity(record.timestamp);
      return withIds(results, record.uuid);
    }
    if (text.trim() === "") return [];
    if (INTERRUPTED.test(text.trim())) {
      turn.activity(record.timestamp);
      return withIds(
        [statusItem({ status: "interrupted", detail: text.trim(), brief: "Interrupted by the user" })],
        record.uuid,
      );
    }
    // A new prompt ends the turn before it (when the transcript has no turn_duration line).
    const items: ThreadItem[] = [];
    const ended = turn.finish();
    if (ended) items.push(ended);
    turn.begin(record.timestamp);
    if (includeUserPrompts) items.push(...withIds([plainPostItem(text)], record.uuid));
    return items;
  }

  function assistant(record: Record_): ThreadItem[] {
    const message = object(record.message);
    if (!message) throw new RecordProblem("assistant record has no message object");
    turn.activity(record.timestamp);
    // Every content block is its own line, each repeating the message's usage: count it once per id.
    turn.callUsage(
      typeof message.id === "string" ? message.id : String(record.uuid),
      anthropicUsage(message.usage),
    );
    if (record.isApiErrorMessage === true) {
      const detail = contentText(message.content);
      return withIds([statusItem({ status: "api_error", detail })], record.uuid);
    }
    return withIds(assistantItems(message.content, "assistant record"), record.uuid);
  }

  function system(record: Record_): ThreadItem[] {
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
        const ended = turn.finish({
          ...(typeof duration === "number" ? { durationMs: duration } : {}),
          at: record.timestamp,
        });
        return ended ? [ended] : [];
      }
      case "api_error": {
        const error = object(record.error);
        const detail =
          typeof error?.message === "string"
            ? error.message
            : typeof record.content === "string"
              ? record.content
              : undefined;
        return withIds([statusItem({ status: "api_error", ...(detail ? { detail } : {}) })], record.uuid);
      }
      default:
        return [];
    }
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
          return system(record);
        default:
          return [];
      }
    },
    end() {
      const ended = turn.finish();
      return ended ? [ended] : [];
    },
    sessionId: () => sessionId,
  });
}

/** Converts a whole Claude Code transcript (JSONL text or UTF-8 bytes) into thread items. */
export function convertClaudeCodeTranscript(
  input: string | Uint8Array,
  options: ClaudeCodeTranscriptOptions = {},
): ConversionResult {
  return convertLines(input, createClaudeCodeTranscriptConverter(options));
}
