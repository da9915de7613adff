import { describeValue, StowageError } from "@stowage/core";
import { oneLine } from "../builders/brief-text.js";
import { type FoldedThreadEntry, foldToolPairs } from "../fold-tool-pairs.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";

/** Who said a message of a conversation history: a person, or the agent (its text and its tool calls). */
export type HistoryRole = "user" | "assistant";

/** One message of a conversation history, as the follow-up prompt carries it. */
export interface HistoryMessage {
  role: HistoryRole;
  /** `text`: what was said; `tool`: a tool call and its result, folded into one line of their briefs. */
  kind: "text" | "tool";
  text: string;
}

/**
 * Longest message text kept, in UTF-16 units: a longer one keeps its head and its tail around a
 * marker, so one pasted file cannot take the whole prompt (and the counter sees bounded text).
 */
const MAX_HISTORY_MESSAGE_CHARS = 16_000;
/** Longest tool line: the call's brief and the result's are one line each already (about 120 characters). */
const MAX_TOOL_LINE_CHARS = 400;
/**
 * A run of one kind of character longer than this (a base64 payload, a minified line, a row of
 * spaces) is cut: a model reads nothing in it, and o200k counting refuses a run over 1,024.
 */
const MAX_RUN_CHARS = 1_000;
const LONG_RUN = new RegExp(`\\S{${MAX_RUN_CHARS + 1},}|\\s{${MAX_RUN_CHARS + 1},}`, "g");

/** `text` with every run over {@link MAX_RUN_CHARS} cut to its head and a note of what was left out. */
function cutLongRuns(text: string): string {
  return text.replace(LONG_RUN, (run) =>
    /^\s/.test(run) ? "\n\n" : `${run.slice(0, 200)}…[${run.length - 200} more characters]`,
  );
}

/** `text` within `max` characters: its head and tail around `…[N characters left out]…`. */
export function cutMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.75);
  const tail = Math.max(0, max - head);
  // Never split a surrogate pair at either cut.
  let headEnd = head;
  if (headEnd > 0 && /[\ud800-\udbff]/.test(text[headEnd - 1]!)) headEnd--;
  let tailStart = text.length - tail;
  if (tailStart < text.length && /[\udc00-\udfff]/.test(text[tailStart]!)) tailStart++;
  return `${text.slice(0, headEnd)}\n…[${tailStart - headEnd} characters left out]…\n${text.slice(tailStart)}`;
}

function textOf(item: ThreadItem): string {
  const parts: string[] = [];
  let length = 0;
  for (const part of item.content) {
    if (typeof part?.text !== "string") continue;
    parts.push(part.text);
    length += part.text.length;
    // Enough to cut from: a hostile item with thousands of huge parts costs no more.
    if (length > MAX_HISTORY_MESSAGE_CHARS * 2) break;
  }
  return parts.join("\n").trim();
}

const briefOf = (item: ThreadItem | undefined): string =>
  item && Array.isArray(item.content) && typeof item.content[0]?.text === "string"
    ? item.content[0].text
    : "";

/** A tool call and its result as one line of their briefs: `Bash → npm test → ok (3 lines)`. */
function toolLine(entry: Extract<FoldedThreadEntry, { kind: "tool" }>): string {
  const call = oneLine(briefOf(entry.call), MAX_TOOL_LINE_CHARS / 2) || oneLine(entry.name ?? "tool", 100);
  const result = entry.result ? oneLine(briefOf(entry.result), MAX_TOOL_LINE_CHARS / 2) : "(no result)";
  const failed = entry.result?.metadata.tool.is_error === true ? " [error]" : "";
  return `${call} ${result}${failed}`;
}

/** The message an entry is, or undefined for what a history leaves out (reasoning, status, turn ends, prompts). */
function messageOf(entry: FoldedThreadEntry): HistoryMessage | undefined {
  if (entry.kind === "tool") return { role: "assistant", kind: "tool", text: toolLine(entry) };
  const { item } = entry;
  const type = (item.metadata as { type?: unknown } | undefined)?.type;
  // A plain post (no type) is what a person wrote; a text item is the agent's answer.
  const role: HistoryRole | undefined =
    type === undefined ? "user" : type === "text" ? "assistant" : undefined;
  if (role === undefined) return undefined;
  const text = cutMiddle(cutLongRuns(textOf(item)), MAX_HISTORY_MESSAGE_CHARS);
  return text === "" ? undefined : { role, kind: "text", text };
}

function assertItems(items: unknown): asserts items is ThreadItem[] {
  if (!Array.isArray(items)) {
    throw new StowageError(
      "INVALID_INPUT",
      `items must be an array of thread items, got ${describeValue(items)}`,
    );
  }
  for (let index = 0; index < items.length; index++) {
    const item = items[index] as { content?: unknown } | null;
    if (typeof item !== "object" || item === null || !Array.isArray(item.content)) {
      throw new StowageError(
        "INVALID_INPUT",
        `items[${index}] must be a thread item ({ content: [{ type: "text", text }], metadata? }), got ${describeValue(item)}`,
      );
    }
  }
}

/**
 * Every message of the conversation the items hold, oldest first, and how many there are: user
 * posts and the agent's text as messages, each tool call folded with its result into one line,
 * everything else left out. Only the last `keep` are rendered, so thousands of items cost one
 * pass over them.
 */
export function lastMessages(
  items: readonly unknown[],
  keep: number,
): { messages: HistoryMessage[]; total: number } {
  assertItems(items);
  const entries = foldToolPairs(items);
  const kept: HistoryMessage[] = [];
  let total = 0;
  // Newest first, counting every message but rendering only the kept ones.
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index]!;
    if (kept.length >= keep) {
      if (isMessage(entry)) total++;
      continue;
    }
    const message = messageOf(entry);
    if (message === undefined) continue;
    total++;
    kept.push(message);
  }
  return { messages: kept.reverse(), total };
}

/** Whether `entry` would be a message, without rendering it (its text may still be empty). */
function isMessage(entry: FoldedThreadEntry): boolean {
  if (entry.kind === "tool") return true;
  const type = (entry.item.metadata as { type?: unknown } | undefined)?.type;
  return (type === undefined || type === "text") && textOf(entry.item) !== "";
}
