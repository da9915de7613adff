import { statusItem, thinkingItem } from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { partsText } from "./codex-content.js";
import { eventItems, skimEventLine } from "./codex-events.js";
import { messageItems } from "./codex-prompts.js";
import {
  activity,
  type CodexState,
  countTokens,
  createCodexState,
  finishTurn,
  releaseRunning,
} from "./codex-state.js";
import {
  customToolCallItems,
  functionCallItems,
  localShellCallItems,
  toolOutputItems,
  webSearchItems,
} from "./codex-tool-calls.js";
import { type LineConverter, lineConverter, RecordProblem } from "./conversion.js";
import { type Fields, object, statusDetail } from "./record-fields.js";

/** Options of {@link createCodexRolloutConverter}. */
export interface CodexRolloutOptions {
  /** Turn what the human typed into plain posts. Default true. */
  includeUserPrompts?: boolean;
}

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

function responseItems(state: CodexState, payload: Fields, timestamp: unknown): ThreadItem[] {
  switch (payload.type) {
    case "message":
      return messageItems(state, payload, timestamp);
    case "reasoning": {
      let text = partsText(payload.summary);
      if (text.trim() === "") text = partsText(payload.content);
      if (text.trim() === "") return [];
      activity(state, timestamp);
      return [thinkingItem(text)];
    }
    case "function_call":
      return functionCallItems(state, payload, timestamp);
    case "custom_tool_call":
      return customToolCallItems(state, payload, timestamp);
    case "local_shell_call":
      return localShellCallItems(state, payload, timestamp);
    case "web_search_call":
      return webSearchItems(state, payload, timestamp);
    case "function_call_output":
    case "custom_tool_call_output":
      return toolOutputItems(state, payload, timestamp);
    default:
      return [];
  }
}

function sessionMetaItems(state: CodexState, payload: Fields | undefined): ThreadItem[] {
  if (!payload) throw new RecordProblem("session_meta line has no payload object");
  if (typeof payload.id === "string") state.sessionId ??= payload.id;
  const version = typeof payload.cli_version === "string" ? `codex ${payload.cli_version}` : undefined;
  return [
    statusItem({
      status: "session_started",
      ...(version ? { detail: statusDetail(version) } : {}),
      brief: "Session started",
    }),
  ];
}

function recordItems(state: CodexState, record: Fields): ThreadItem[] {
  const payload = object(record.payload);
  switch (record.type) {
    case "session_meta":
      return sessionMetaItems(state, payload);
    case "response_item":
      if (!payload) throw new RecordProblem("response_item line has no payload object");
      return responseItems(state, payload, record.timestamp);
    case "event_msg":
      if (!payload) throw new RecordProblem("event_msg line has no payload object");
      return eventItems(state, payload, record.timestamp);
    case "compacted":
      return [statusItem({ status: "context_compacted", brief: "Context compacted" })];
    case "turn_context":
      return [];
    default:
      if (typeof record.type === "string" && RESPONSE_ITEM_TYPES.has(record.type)) {
        return responseItems(state, record, record.timestamp);
      }
      // The oldest rollouts open with a bare `{id, timestamp, instructions}` header.
      if (
        record.type === undefined &&
        typeof record.id === "string" &&
        typeof record.timestamp === "string"
      ) {
        state.sessionId ??= record.id;
        return [];
      }
      if (typeof record.type !== "string" && record.record_type === undefined) {
        throw new RecordProblem("line has no string type");
      }
      return [];
  }
}

/**
 * An incremental converter of a Codex CLI rollout (`rollout-<time>-<uuid>.jsonl`), one line at a
 * time. Content comes from `response_item` lines; a prompt is posted once, from its `response_item`
 * message or its `event_msg` `user_message` copy, whichever the rollout has. Turns follow
 * `task_started` / `task_complete` events (in rollouts without them, a prompt after agent activity
 * starts a new one); per-turn tokens come from the difference of the cumulative `token_count`
 * totals. A command still running when its output was recorded gets its result when it exits
 * (`exec_command_end`, with its exit code and whole output), even in a later turn (a dev server
 * outlives the task that started it), or at the end of input with what it printed. Unknown
 * line and payload types are skipped; lines that are not JSON or have the wrong shape are reported.
 * Pass it to `convertTranscript` for a whole file.
 */
export function createCodexRolloutConverter(options: CodexRolloutOptions = {}): LineConverter {
  const state = createCodexState(options.includeUserPrompts ?? true);
  return lineConverter({
    skim(line) {
      const skimmed = skimEventLine(line);
      if (skimmed === undefined) return undefined;
      if (skimmed !== "ignored") countTokens(state, skimmed);
      return [];
    },
    record: (record) => recordItems(state, record),
    end: () => [...releaseRunning(state), ...finishTurn(state)],
    sessionId: () => state.sessionId,
  });
}
