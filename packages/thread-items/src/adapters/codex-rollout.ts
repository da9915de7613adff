import {
  plainPostItem,
  statusItem,
  textItem,
  thinkingItem,
  toolCallItem,
  toolResultItem,
} from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import {
  type ConversionResult,
  convertLines,
  type LineConverter,
  lineConverter,
  RecordProblem,
} from "./conversion.js";
import { imagePlaceholder, parseDataUrl } from "./media-placeholder.js";
import { openAiUsage, type TokenUsage, TurnTracker } from "./turn-tracker.js";

export interface CodexRolloutOptions {
  /** Turn what the human typed into plain posts. Default true. */
  includeUserPrompts?: boolean;
}

type Fields = Record<string, unknown>;

const object = (value: unknown): Fields | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;

/** Payload types of `response_item` lines; the oldest rollouts wrote them bare, without the envelope. */
const RESPONSE_ITEM_TYPES = new Set([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "web_search_call",
]);

// Context Codex injects as user messages; nobody typed them.
const INJECTED_USER_TEXT =
  /^\s*(<environment_context>|<user_instructions>|<user_shell_command>|# AGENTS\.md instructions)/;

function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const part of content) {
    const fields = object(part);
    if (!fields) continue;
    if (typeof fields.text === "string") parts.push(fields.text);
    else if (fields.type === "input_image") {
      const data = parseDataUrl(fields.image_url);
      parts.push(
        data ? imagePlaceholder(data.mediaType, data.base64) : imagePlaceholder(undefined, undefined),
      );
    }
  }
  return parts.join("\n");
}

/** A tool output as Codex stores it: JSON `{output, metadata: {exit_code}}`, "Exit code: N" text, or `{content, success}`. */
function toolOutput(raw: unknown): { output: string; isError: boolean } {
  const fields = object(raw);
  if (fields) {
    const text =
      typeof fields.content === "string" ? fields.content : partsText(fields.content_items ?? fields.content);
    return { output: text, isError: fields.success === false };
  }
  if (Array.isArray(raw)) return { output: partsText(raw), isError: false };
  if (typeof raw !== "string")
    return { output: raw === undefined ? "" : JSON.stringify(raw), isError: false };
  if (raw.startsWith("{")) {
    try {
      const parsed = object(JSON.parse(raw));
      if (parsed && typeof parsed.output === "string") {
        const exitCode = object(parsed.metadata)?.exit_code;
        return { output: parsed.output, isError: typeof exitCode === "number" && exitCode !== 0 };
      }
    } catch {
      // Not the JSON envelope: the output is the text itself.
    }
  }
  const exit = /^Exit code: (-?\d+)/.exec(raw);
  return { output: raw, isError: exit !== null && exit[1] !== "0" };
}

function callId(payload: Fields, what: string): string {
  const id = payload.call_id ?? payload.id;
  if (typeof id !== "string" || id === "") throw new RecordProblem(`${what} has no string call_id`);
  return id;
}

function toolName(payload: Fields, what: string): string {
  if (typeof payload.name !== "string" || payload.name === "")
    throw new RecordProblem(`${what} has no string name`);
  return payload.name;
}

const subtract = (later: TokenUsage, earlier: TokenUsage): TokenUsage => ({
  input: Math.max(0, later.input - earlier.input),
  cached: Math.max(0, later.cached - earlier.cached),
  output: Math.max(0, later.output - earlier.output),
});

/**
 * An incremental converter of a Codex CLI rollout (`rollout-<time>-<uuid>.jsonl`), one line at a
 * time. Content comes from `response_item` lines (the `event_msg` copies of messages are skipped);
 * turns from `task_started` / `task_complete` events (or, in older rollouts, from user messages);
 * per-turn tokens from the difference of the cumulative `token_count` totals. Unknown line and
 * payload types are skipped; lines that are not JSON or have the wrong shape are reported.
 */
export function createCodexRolloutConverter(options: CodexRolloutOptions = {}): LineConverter {
  const includeUserPrompts = options.includeUserPrompts ?? true;
  const turn = new TurnTracker();
  let sessionId: string | undefined;
  let totals: TokenUsage = { input: 0, cached: 0, output: 0 };
  let totalsAtTurnStart = totals;

  function begin(timestamp: unknown): void {
    turn.begin(timestamp);
    totalsAtTurnStart = totals;
  }

  function finish(timestamp?: unknown): ThreadItem[] {
    const ended = turn.finish({ usage: subtract(totals, totalsAtTurnStart), at: timestamp });
    return ended ? [ended] : [];
  }

  function activity(timestamp: unknown): void {
    if (!turn.open) begin(timestamp);
    turn.activity(timestamp);
  }

  function message(payload: Fields, timestamp: unknown): ThreadItem[] {
    const text = partsText(payload.content);
    if (payload.role === "assistant") {
      if (text.trim() === "") return [];
      activity(timestamp);
      return [textItem(text)];
    }
    if (payload.role !== "user" || text.trim() === "" || INJECTED_USER_TEXT.test(text)) return [];
    // A prompt after agent activity starts a new turn (rollouts without task events).
    const items = turn.active ? finish(timestamp) : [];
    if (!turn.open) begin(timestamp);
    if (includeUserPrompts) items.push(plainPostItem(text));
    return items;
  }

  function responseItem(payload: Fields, timestamp: unknown): ThreadItem[] {
    switch (payload.type) {
      case "message":
        return message(payload, timestamp);
      case "reasoning": {
        let text = partsText(payload.summary);
        if (text.trim() === "") text = partsText(payload.content);
        if (text.trim() === "") return [];
        activity(timestamp);
        return [thinkingItem(text)];
      }
      case "function_call": {
        const name = toolName(payload, "function_call");
        let input: unknown = payload.arguments;
        if (typeof input === "string") {
          try {
            input = JSON.parse(input);
          } catch {
            // Arguments that are not JSON are kept as the model wrote them.
          }
        }
        activity(timestamp);
        return [toolCallItem({ name, invocationId: callId(payload, "function_call"), input: input ?? {} })];
      }
      case "custom_tool_call":
        activity(timestamp);
        return [
          toolCallItem({
            name: toolName(payload, "custom_tool_call"),
            invocationId: callId(payload, "custom_tool_call"),
            input: payload.input ?? "",
          }),
        ];
      case "local_shell_call":
        activity(timestamp);
        return [
          toolCallItem({
            name: "local_shell",
            invocationId: callId(payload, "local_shell_call"),
            input: payload.action ?? {},
          }),
        ];
      case "web_search_call": {
        activity(timestamp);
        const id = payload.call_id ?? payload.id;
        if (typeof id !== "string" || id === "") return [];
        return [toolCallItem({ name: "web_search", invocationId: id, input: object(payload.action) ?? {} })];
      }
      case "function_call_output":
      case "custom_tool_call_output": {
        const { output, isError } = toolOutput(payload.output);
        activity(timestamp);
        return [toolResultItem({ invocationId: callId(payload, payload.type), output, isError })];
      }
      default:
        return [];
    }
  }

  function event(payload: Fields, timestamp: unknown): ThreadItem[] {
    switch (payload.type) {
      case "task_started":
      case "turn_started": {
        const items = turn.active ? finish(timestamp) : [];
        begin(timestamp);
        return items;
      }
      case "task_complete":
      case "turn_complete":
        return finish(timestamp);
      case "token_count": {
        const usage = openAiUsage(object(payload.info)?.total_token_usage);
        if (usage) totals = usage;
        return [];
      }
      case "turn_aborted": {
        const reason = typeof payload.reason === "string" ? payload.reason : undefined;
        activity(timestamp);
        const aborted = statusItem({ status: "turn_aborted", ...(reason ? { detail: reason } : {}) });
        return [aborted, ...finish(timestamp)];
      }
      case "error":
      case "stream_error": {
        const detail = typeof payload.message === "string" ? payload.message : undefined;
        return [statusItem({ status: payload.type, ...(detail ? { detail } : {}) })];
      }
      default:
        return [];
    }
  }

  return lineConverter({
    record(record) {
      const payload = object(record.payload);
      switch (record.type) {
        case "session_meta": {
          if (!payload) throw new RecordProblem("session_meta line has no payload object");
          if (typeof payload.id === "string") sessionId ??= payload.id;
          const version =
            typeof payload.cli_version === "string" ? `codex ${payload.cli_version}` : undefined;
          return [
            statusItem({
              status: "session_started",
              ...(version ? { detail: version } : {}),
              brief: "Session started",
            }),
          ];
        }
        case "response_item":
          if (!payload) throw new RecordProblem("response_item line has no payload object");
          return responseItem(payload, record.timestamp);
        case "event_msg":
          if (!payload) throw new RecordProblem("event_msg line has no payload object");
          return event(payload, record.timestamp);
        case "compacted":
          return [statusItem({ status: "context_compacted", brief: "Context compacted" })];
        case "turn_context":
          return [];
        default:
          if (typeof record.type === "string" && RESPONSE_ITEM_TYPES.has(record.type)) {
            return responseItem(record, record.timestamp);
          }
          // The oldest rollouts open with a bare `{id, timestamp, instructions}` header.
          if (
            record.type === undefined &&
            typeof record.id === "string" &&
            typeof record.timestamp === "string"
          ) {
            sessionId ??= record.id;
            return [];
          }
          if (typeof record.type !== "string" && record.record_type === undefined) {
            throw new RecordProblem("line has no string type");
          }
          return [];
      }
    },
    end: () => finish(),
    sessionId: () => sessionId,
  });
}

/** Converts a whole Codex CLI rollout (JSONL text or UTF-8 bytes) into thread items. */
export function convertCodexRollout(
  input: string | Uint8Array,
  options: CodexRolloutOptions = {},
): ConversionResult {
  return convertLines(input, createCodexRolloutConverter(options));
}
