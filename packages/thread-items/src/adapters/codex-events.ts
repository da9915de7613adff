import { statusItem } from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { userMessageItems } from "./codex-prompts.js";
import { activity, beginTurn, type CodexState, countTokens, finishTurn } from "./codex-state.js";
import { commandEndItems } from "./codex-tool-calls.js";
import { type Fields, object, statusDetail } from "./record-fields.js";
import { openAiUsage, type TokenUsage } from "./turn-tracker.js";

/** The items of an `event_msg` line's payload: turns, token counts, prompts, command ends, errors. */
export function eventItems(state: CodexState, payload: Fields, timestamp: unknown): ThreadItem[] {
  switch (payload.type) {
    case "task_started":
    case "turn_started": {
      state.taskEvents = true;
      const items = state.turn.active ? finishTurn(state, timestamp) : [];
      beginTurn(state, timestamp);
      return items;
    }
    case "task_complete":
    case "turn_complete":
      return finishTurn(state, timestamp);
    case "token_count": {
      const usage = openAiUsage(object(payload.info)?.total_token_usage);
      if (usage) countTokens(state, usage);
      return [];
    }
    case "user_message":
      return userMessageItems(state, payload, timestamp);
    case "exec_command_end":
      return commandEndItems(state, payload);
    case "patch_apply_end":
      if (typeof payload.call_id === "string") state.patches.set(payload.call_id, payload.success !== false);
      return [];
    case "web_search_end":
      if (typeof payload.call_id === "string" && payload.call_id !== "") {
        state.searches.push({ id: payload.call_id, query: object(payload.action)?.query ?? payload.query });
      }
      return [];
    case "turn_aborted": {
      const reason = typeof payload.reason === "string" ? payload.reason : undefined;
      activity(state, timestamp);
      const aborted = statusItem({ status: "turn_aborted", ...(reason ? { detail: reason } : {}) });
      return [aborted, ...finishTurn(state, timestamp)];
    }
    case "error":
    case "stream_error": {
      const detail = typeof payload.message === "string" ? statusDetail(payload.message) : undefined;
      return [statusItem({ status: payload.type, ...(detail ? { detail } : {}) })];
    }
    default:
      return [];
  }
}

const TIMESTAMP_OPENING = '{"timestamp":"';
const EVENT_OPENING = '","type":"event_msg","payload":{"type":"';
/** The longest timestamp a skimmed line may have (Codex writes 24 characters). */
const MAX_TIMESTAMP_CHARS = 40;
/**
 * Events this adapter takes nothing from: copies of what `response_item` lines hold (the agent's
 * messages and reasoning). `token_count` lines are read for their totals only.
 */
const IGNORED_EVENTS = new Set(["agent_message", "agent_reasoning", "agent_reasoning_raw_content"]);
const TOTAL_USAGE_OPENING = '"info":{"total_token_usage":{';
/** Codex's token usage object: names and whole numbers only. */
const FLAT_COUNTS = /^\{"[a-z_]+":\d+(?:,"[a-z_]+":\d+)*\}$/;

/**
 * What an `event_msg` line Codex writes by the hundred gives, read from its text without parsing
 * the rest: "ignored" for an event this adapter takes nothing from, the cumulative totals of a
 * `token_count` (whose rate limits and last usage make it the largest line of a rollout), or
 * undefined to parse the line as usual: anything not in exactly the shape Codex writes
 * (`{"timestamp":"…","type":"event_msg","payload":{"type":"…"`, ending in `}`), and a
 * `token_count` whose totals are not a flat object of numbers. A cut line does not end in `}`, so
 * it is still parsed and reported.
 */
export function skimEventLine(line: string): TokenUsage | "ignored" | undefined {
  if (!line.startsWith(TIMESTAMP_OPENING) || line.charCodeAt(line.length - 1) !== 0x7d) return undefined;
  const opening = line.indexOf(EVENT_OPENING, TIMESTAMP_OPENING.length);
  if (opening === -1 || opening > TIMESTAMP_OPENING.length + MAX_TIMESTAMP_CHARS) return undefined;
  const typeStart = opening + EVENT_OPENING.length;
  const typeEnd = line.indexOf('"', typeStart);
  if (typeEnd === -1) return undefined;
  const type = line.slice(typeStart, typeEnd);
  if (IGNORED_EVENTS.has(type)) return "ignored";
  if (type !== "token_count" || !line.startsWith(TOTAL_USAGE_OPENING, typeEnd + 2)) return undefined;
  const usageStart = typeEnd + 2 + TOTAL_USAGE_OPENING.length - 1;
  const usageEnd = line.indexOf("}", usageStart);
  if (usageEnd === -1) return undefined;
  const usage = line.slice(usageStart, usageEnd + 1);
  return FLAT_COUNTS.test(usage) ? openAiUsage(JSON.parse(usage)) : undefined;
}
