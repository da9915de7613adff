import { assertSafeId, describeValue, StowageError, sanitizeText } from "@stowage/core";
import { MAX_ITEM_ID_LENGTH } from "../schema/item-id.js";
import { promptProblem } from "../schema/parse-thread-item.js";
import { sanitizeJsonStrings } from "../schema/sanitize-json-strings.js";
import {
  type PendingPromptItem,
  type PendingPromptResolvedItem,
  type PlainPostItem,
  PROMPT_KINDS,
  PROMPT_OUTCOMES,
  type Prompt,
  type PromptKind,
  type PromptOutcome,
  STATUS_TOKEN_PATTERN,
  type StatusItem,
  type TextItem,
  type ThinkingItem,
  type ToolCallItem,
  type ToolResultItem,
  type TurnEndItem,
} from "../schema/thread-item-schema.js";
import {
  codePointLength,
  countLines,
  firstLine,
  firstLineOfClean,
  oneLineOfClean,
  THINKING_BRIEF_CHARS,
} from "./brief-text.js";
import { summarizeToolInput } from "./tool-summary.js";

/** Options every builder takes. */
export interface ItemIdentity {
  /** The item's stable id; the thread log assigns one when absent. */
  id?: string;
}

function requireString(value: unknown, what: string, nonEmpty = false): string {
  if (typeof value !== "string" || (nonEmpty && value === "")) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a ${nonEmpty ? "non-empty " : ""}string, got ${describeValue(value)}`,
    );
  }
  return value;
}

function requireCount(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a non-negative integer, got ${describeValue(value)}`,
    );
  }
  return value;
}

/** A figure that may be unknown: null, or a non-negative integer. */
const countOrNull = (value: unknown, what: string): number | null =>
  value === null ? null : requireCount(value, what);

/**
 * An item with `cleanBrief` as its content. Every string of an item goes to people and models as
 * it is, so every one is sanitized (core's `sanitizeText`: escape sequences removed, control
 * characters but `\n` and `\t` dropped, `\r` made `\n`, invisible characters that hide or
 * reorder text dropped): each string of `metadata` (tool names, inputs, outputs, thinking text,
 * prompt payloads, object keys) and the brief, by its builder, which knows which ones it already
 * cleaned — scanning a 100 MiB output twice would double the cost of building its item. A brief
 * made of clean pieces (a cleaned name, {@link firstLine}s, a tool summary) joined by plain text
 * is clean as it is; a brief with any raw piece is passed through `sanitizeText` first.
 */
function item<M>(cleanBrief: string, metadata: M, id: string | undefined) {
  const content = [{ type: "text" as const, text: cleanBrief }];
  if (id === undefined) return { content, metadata };
  assertSafeId(id, "thread item id", MAX_ITEM_ID_LENGTH);
  return { id, content, metadata };
}

/** The agent's user-facing text: the whole text is the brief; `metadata` holds only the type. */
export function textItem(text: string, identity?: ItemIdentity): TextItem {
  return item(sanitizeText(requireString(text, "text")), { type: "text" as const }, identity?.id);
}

export interface ToolCallInput extends ItemIdentity {
  name: string;
  invocationId: string;
  /** The tool's input as the agent sent it (any JSON value). */
  input: unknown;
}

/** A tool invocation; brief `<Name> → <summary>` (`Bash → npm test`), or just the name. */
export function toolCallItem({ name, invocationId, input, id }: ToolCallInput): ToolCallItem {
  return toolCall(name, invocationId, input, sanitizeJsonStrings(input), id);
}

/**
 * JSON escapes whose characters `sanitizeText` acts on (`\b`, `\f`, `\r`, any `\uXXXX`); `\n`,
 * `\t`, `\"`, `\\` and `\/` give characters it keeps.
 */
const ESCAPE_SANITIZING_ACTS_ON = /\\[bfru]/;

/**
 * A tool invocation whose input the agent wrote as JSON text (Codex's `arguments`), given with
 * `input` parsed from it. When the text holds nothing `sanitizeText` acts on, raw or escaped, no
 * string parsed from it does either, so `input` is not walked again: for Codex's many small
 * calls, that walk was about a fifteenth of converting a rollout.
 */
export function toolCallItemOfJson({
  name,
  invocationId,
  input,
  json,
  id,
}: ToolCallInput & { json: string }): ToolCallItem {
  const clean = sanitizeText(json) === json && !ESCAPE_SANITIZING_ACTS_ON.test(json);
  return toolCall(name, invocationId, input, clean ? input : sanitizeJsonStrings(input), id);
}

function toolCall(
  name: string,
  invocationId: string,
  input: unknown,
  cleanInput: unknown,
  id: string | undefined,
): ToolCallItem {
  requireString(name, "tool name", true);
  requireString(invocationId, "tool invocation id", true);
  const cleanName = sanitizeText(name);
  // A summary is made of sanitized pieces (tool-summary.ts): the brief needs no second scan.
  const summary = summarizeToolInput(name, input);
  return item(
    summary ? `${cleanName} → ${summary}` : cleanName,
    {
      type: "tool_call" as const,
      tool: { name: cleanName, invocation_id: sanitizeText(invocationId), input: cleanInput },
    },
    id,
  );
}

export interface ToolResultInput extends ItemIdentity {
  invocationId: string;
  output: string;
  isError?: boolean;
}

function briefOfLines(first: string, lines: number): string {
  if (lines === 0) return "→ (no output)";
  return `→ ${first} (${lines} ${lines === 1 ? "line" : "lines"})`;
}

/**
 * A tool's result; carries no tool name (renderers fold it with its call by `invocation_id`). The
 * output is sanitized like every brief (colors, cursor moves and control bytes of a terminal
 * removed): the item holds what a model or a person should read; the raw bytes stay in the
 * agent's own transcript or artifact.
 */
export function toolResultItem({
  invocationId,
  output,
  isError = false,
  id,
}: ToolResultInput): ToolResultItem {
  requireString(invocationId, "tool invocation id", true);
  requireString(output, "tool output");
  if (typeof isError !== "boolean") {
    throw new StowageError("INVALID_INPUT", `isError must be a boolean, got ${describeValue(isError)}`);
  }
  const clean = sanitizeText(output);
  return item(
    briefOfLines(firstLineOfClean(clean), countLines(clean)),
    {
      type: "tool_result" as const,
      tool: { invocation_id: sanitizeText(invocationId), is_error: isError, output: clean },
    },
    id,
  );
}

/** Reasoning: brief `[thinking] <first ~120 chars>`, the full text (sanitized) and its length in code points in `metadata`. */
export function thinkingItem(text: string, identity?: ItemIdentity): ThinkingItem {
  // Sanitized first, so that the length counts what the item holds.
  const clean = sanitizeText(requireString(text, "thinking text"));
  return item(
    `[thinking] ${oneLineOfClean(clean, THINKING_BRIEF_CHARS)}`,
    { type: "thinking" as const, text: clean, full_text_length: codePointLength(clean) },
    identity?.id,
  );
}

export interface StatusInput extends ItemIdentity {
  /** Machine token, lower-case snake case (`compacting_context`). */
  status: string;
  detail?: string;
  /** The human brief; default: the token in words, then the detail (`Compacting context: …`). */
  brief?: string;
}

/** A progress ping with a machine token. */
export function statusItem({ status, detail, brief, id }: StatusInput): StatusItem {
  if (typeof status !== "string" || !STATUS_TOKEN_PATTERN.test(status)) {
    throw new StowageError(
      "INVALID_INPUT",
      `status must be a lower-case snake_case token of at most 64 characters (e.g. "compacting_context"), got ${describeValue(status)}`,
    );
  }
  if (detail !== undefined) requireString(detail, "status detail");
  if (brief !== undefined) requireString(brief, "status brief");
  const words = status.replaceAll("_", " ");
  // The token's words and a first line are clean; a given brief is not.
  const cleanBrief =
    brief === undefined
      ? `${words[0]!.toUpperCase()}${words.slice(1)}${detail ? `: ${firstLine(detail)}` : ""}`
      : sanitizeText(brief);
  return item(
    cleanBrief,
    // The token matched STATUS_TOKEN_PATTERN: nothing in it to clean.
    { type: "status" as const, status, ...(detail === undefined ? {} : { detail: sanitizeText(detail) }) },
    id,
  );
}

export interface TurnEndInput extends ItemIdentity {
  /** Total input processed this turn, cached plus uncached; null when the source did not record it. */
  inputTokens: number | null;
  /** The part of `inputTokens` served from the prompt cache; null when unknown. */
  inputTokensCached: number | null;
  /** Null when unknown. */
  outputTokens: number | null;
  /** Wall time of the turn; null when unknown. */
  durationMs: number | null;
}

/**
 * The end of an agent turn, with its token and time figures; a figure the source did not record
 * is null, never a zero (the cached ≤ input check applies when both are known).
 */
export function turnEndItem({
  inputTokens,
  inputTokensCached,
  outputTokens,
  durationMs,
  id,
}: TurnEndInput): TurnEndItem {
  const stats = {
    input_tokens: countOrNull(inputTokens, "inputTokens"),
    input_tokens_cached: countOrNull(inputTokensCached, "inputTokensCached"),
    output_tokens: countOrNull(outputTokens, "outputTokens"),
    duration_ms: countOrNull(durationMs, "durationMs"),
  };
  if (
    stats.input_tokens !== null &&
    stats.input_tokens_cached !== null &&
    stats.input_tokens_cached > stats.input_tokens
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `inputTokensCached (${inputTokensCached}) must not exceed inputTokens (${inputTokens}), which includes the cached part`,
    );
  }
  return item("Turn complete", { type: "turn_end" as const, stats }, id);
}

function promptBrief(prompt: Prompt): string {
  switch (prompt.kind) {
    case "text":
      return `Waiting for input: ${firstLine(prompt.text)}`;
    case "approval": {
      const summary = summarizeToolInput(prompt.tool_name, prompt.input);
      return `Approval needed: ${prompt.tool_name}${summary ? ` → ${summary}` : ""}`;
    }
    case "ask_user_question": {
      const more = prompt.questions.length > 1 ? ` (+${prompt.questions.length - 1} more)` : "";
      return `Question: ${firstLine(prompt.questions[0]!.question)}${more}`;
    }
  }
}

export interface PendingPromptInput extends ItemIdentity {
  promptId: string;
  /** The agent's full prompt payload, discriminated on `kind`. */
  prompt: Prompt;
}

/** The agent waits for a human: free text, an approval, or answers to questions. */
export function pendingPromptItem({ promptId, prompt, id }: PendingPromptInput): PendingPromptItem {
  requireString(promptId, "promptId", true);
  const problem = promptProblem(prompt);
  if (problem) throw new StowageError("INVALID_INPUT", `prompt is invalid at ${problem}`);
  // The brief quotes the prompt's tool name as it is.
  return item(
    sanitizeText(promptBrief(prompt)),
    {
      type: "pending_prompt" as const,
      prompt_id: sanitizeText(promptId),
      prompt: sanitizeJsonStrings(prompt),
    },
    id,
  );
}

export interface PendingPromptResolvedInput extends ItemIdentity {
  promptId: string;
  kind: PromptKind;
  outcome: PromptOutcome;
  /** What the human answered (the text, the chosen options, the approval decision…). */
  response?: unknown;
  /** Approvals: whether the human approved. Ignored unless `outcome` is `answered`. */
  approved?: boolean;
  detail?: string;
}

const OUTCOME_BRIEF: Readonly<Record<PromptOutcome, string>> = {
  answered: "Prompt answered",
  cancelled: "Prompt cancelled",
  failed: "Prompt failed",
};

/**
 * The audit record of a prompt once answered, cancelled or failed. For an approval, `approved` is
 * true only when it was answered with an approval: an unanswered approval counts as denied.
 */
export function pendingPromptResolvedItem({
  promptId,
  kind,
  outcome,
  response,
  approved,
  detail,
  id,
}: PendingPromptResolvedInput): PendingPromptResolvedItem {
  requireString(promptId, "promptId", true);
  if (!PROMPT_KINDS.includes(kind)) {
    throw new StowageError(
      "INVALID_INPUT",
      `kind must be one of ${PROMPT_KINDS.join(", ")}, got ${describeValue(kind)}`,
    );
  }
  if (!PROMPT_OUTCOMES.includes(outcome)) {
    throw new StowageError(
      "INVALID_INPUT",
      `outcome must be one of ${PROMPT_OUTCOMES.join(", ")}, got ${describeValue(outcome)}`,
    );
  }
  if (approved !== undefined && typeof approved !== "boolean") {
    throw new StowageError("INVALID_INPUT", `approved must be a boolean, got ${describeValue(approved)}`);
  }
  if (detail !== undefined) requireString(detail, "detail");
  const isApproval = kind === "approval";
  const granted = isApproval && outcome === "answered" && approved === true;
  const brief = isApproval ? (granted ? "Approved" : "Denied") : OUTCOME_BRIEF[outcome];
  return item(
    // Words of our own and a first line: clean.
    detail ? `${brief}: ${firstLine(detail)}` : brief,
    {
      type: "pending_prompt_resolved" as const,
      prompt_id: sanitizeText(promptId),
      kind,
      outcome,
      ...(isApproval ? { approved: granted } : {}),
      ...(response === undefined ? {} : { response: sanitizeJsonStrings(response) }),
      ...(detail === undefined ? {} : { detail: sanitizeText(detail) }),
    },
    id,
  );
}

/** A plain user post: text with no `metadata.type` (what a human types into the thread), sanitized like every brief. */
export function plainPostItem(text: string, identity?: ItemIdentity): PlainPostItem {
  requireString(text, "post text");
  const id = identity?.id;
  if (id !== undefined) assertSafeId(id, "thread item id", MAX_ITEM_ID_LENGTH);
  const content = [{ type: "text" as const, text: sanitizeText(text) }];
  return id === undefined ? { content } : { id, content };
}
