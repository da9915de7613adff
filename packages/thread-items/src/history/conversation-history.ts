import { describeValue, StowageError } from "@stowage/core";
import { cutMiddle, type HistoryMessage, lastMessages } from "./history-messages.js";

/** Messages a history keeps unless told otherwise: document 002's "pass 50 messages instead of 10". */
const DEFAULT_HISTORY_MESSAGES = 50;
/** Most messages a caller may ask for: a prompt of more is no longer a history but the transcript. */
const MAX_HISTORY_MESSAGES = 10_000;
/** Times the newest message is cut further when it alone is over the budget, before it is left out. */
const MAX_CUTS = 8;

export interface ConversationHistoryOptions {
  /** The last this many messages are kept (1 to 10,000). Default 50. */
  maxMessages?: number;
  /**
   * Tokens the history's text may take, counted by `countTokens` (required with it): the newest
   * messages are kept, the oldest dropped first. Default: no budget.
   */
  budgetTokens?: number;
  /** Counts a text's tokens (e.g. hot-state's `countTokensExact`); also gives `tokens` without a budget. */
  countTokens?: (text: string) => number;
}

export interface ConversationHistory {
  /** The messages kept, oldest first. */
  messages: HistoryMessage[];
  /** Messages of the conversation in all. */
  total: number;
  /** Messages left out (`total - messages.length`): older than the last `maxMessages`, or past the budget. */
  omitted: number;
  /** The history as the follow-up prompt carries it: a line saying what it is, then each message. */
  text: string;
  /** Tokens of `text` by `countTokens`; absent without a counter. */
  tokens?: number;
}

function positiveInteger(value: unknown, name: string, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max) {
    throw new StowageError(
      "INVALID_INPUT",
      `${name} must be an integer from 1 to ${max.toLocaleString("en-US")}, got ${describeValue(value)}`,
    );
  }
  return value;
}

function heading(kept: number, total: number): string {
  if (total === 0) return "Earlier conversation: none was recorded.";
  const left = total - kept;
  const which =
    left === 0
      ? `all ${total} messages`
      : `the last ${kept} of ${total} messages; the ${left} oldest left out`;
  return `Earlier conversation (${which}), oldest first:`;
}

function block(message: HistoryMessage): string {
  const who = message.role === "user" ? "User" : "Assistant";
  return message.kind === "tool" ? `${who} (tool): ${message.text}` : `${who}:\n${message.text}`;
}

/** The history's text: its heading, then each message, a blank line between them. */
function historyText(messages: readonly HistoryMessage[], total: number): string {
  return [heading(messages.length, total), ...messages.map(block)].join("\n\n");
}

function counted(count: (text: string) => number, text: string): number {
  let tokens: unknown;
  try {
    tokens = count(text);
  } catch (err) {
    throw new StowageError(
      "INVALID_INPUT",
      `countTokens failed on the history (${(err as Error)?.message ?? err})`,
      {
        cause: err,
        reason: "UNMEASURABLE",
      },
    );
  }
  if (typeof tokens !== "number" || !Number.isSafeInteger(tokens) || tokens < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `countTokens must return a non-negative integer, got ${describeValue(tokens)}`,
      {
        reason: "UNMEASURABLE",
      },
    );
  }
  return tokens;
}

/**
 * Fits `messages` to `budget` tokens: each message is counted once, newest first, and kept while
 * the running sum fits; the whole text is then counted and the oldest dropped until it fits (the
 * sum of parts and the count of the whole differ by a few tokens at the joins). The newest
 * message alone over the budget is cut in the middle, shorter each time, before it is left out.
 */
function fitToTokens(
  messages: HistoryMessage[],
  total: number,
  budget: number,
  count: (text: string) => number,
): { messages: HistoryMessage[]; tokens: number } {
  let sum = counted(count, heading(messages.length, total));
  let first = messages.length;
  while (first > 0) {
    const cost = counted(count, block(messages[first - 1]!)) + 1;
    if (sum + cost > budget) break;
    sum += cost;
    first--;
  }
  let kept = messages.slice(first);
  if (kept.length === 0 && messages.length > 0) kept = cutNewest(messages.at(-1)!, total, budget, count);
  let tokens = counted(count, historyText(kept, total));
  while (tokens > budget && kept.length > 0) {
    kept = kept.slice(1);
    tokens = counted(count, historyText(kept, total));
  }
  if (tokens > budget) {
    throw new StowageError(
      "INVALID_INPUT",
      `budgetTokens ${budget} does not hold even the history's heading (${tokens} tokens)`,
    );
  }
  return { messages: kept, tokens };
}

function cutNewest(
  newest: HistoryMessage,
  total: number,
  budget: number,
  count: (text: string) => number,
): HistoryMessage[] {
  let text = newest.text;
  for (let attempt = 0; attempt < MAX_CUTS && text.length > 1; attempt++) {
    const tokens = counted(count, historyText([{ ...newest, text }], total));
    if (tokens <= budget) return [{ ...newest, text }];
    text = cutMiddle(newest.text, Math.floor((text.length * budget * 0.9) / tokens));
  }
  return [];
}

/**
 * The conversation the items hold, as a follow-up prompt can carry it when the stored session
 * cannot be resumed (document 002's "Enhanced Conversation History"): the last `maxMessages`
 * user and assistant messages, oldest first; a tool call and its result folded into one line of
 * their briefs (`Bash → npm test → ok (3 lines)`); reasoning, status and turn ends left out;
 * images and documents as the placeholders the adapters put in their place; a message over
 * 16,000 characters cut in the middle. With `budgetTokens`, the newest messages that fit are kept.
 * The text says how many were left out. Pure: nothing is read or written.
 */
export function conversationHistory(
  items: readonly unknown[],
  options: ConversationHistoryOptions = {},
): ConversationHistory {
  const maxMessages = positiveInteger(
    options.maxMessages ?? DEFAULT_HISTORY_MESSAGES,
    "maxMessages",
    MAX_HISTORY_MESSAGES,
  );
  const { countTokens } = options;
  if (countTokens !== undefined && typeof countTokens !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `countTokens must be a function (text) => number, got ${describeValue(countTokens)}`,
    );
  }
  const budget =
    options.budgetTokens === undefined
      ? undefined
      : positiveInteger(options.budgetTokens, "budgetTokens", Number.MAX_SAFE_INTEGER);
  if (budget !== undefined && countTokens === undefined) {
    throw new StowageError(
      "INVALID_INPUT",
      "budgetTokens needs countTokens, the counter it is measured with",
    );
  }
  const { messages, total } = lastMessages(items, maxMessages);
  if (countTokens === undefined) {
    return { messages, total, omitted: total - messages.length, text: historyText(messages, total) };
  }
  const fitted =
    budget === undefined
      ? { messages, tokens: counted(countTokens, historyText(messages, total)) }
      : fitToTokens(messages, total, budget, countTokens);
  return {
    messages: fitted.messages,
    total,
    omitted: total - fitted.messages.length,
    text: historyText(fitted.messages, total),
    tokens: fitted.tokens,
  };
}
