import { clip } from "../builders/brief-text.js";
import { RecordProblem } from "./conversion.js";

/**
 * Longest tool name or invocation id an adapter accepts. Neither is ever cut to fit the budget,
 * so an absurd one would make its item impossible to post; real ones are under 100 characters.
 */
const MAX_TOOL_FIELD_CHARS = 1024;
/**
 * Longest status detail an adapter writes, in UTF-16 units. A status detail is never cut to fit
 * the budget, so long injected text (a command's output, a summary) is clipped here; the agent's
 * own transcript keeps all of it.
 */
const MAX_STATUS_DETAIL_CHARS = 16_384;

/** The fields of a JSON record (or of one of its objects). */
export type Fields = Record<string, unknown>;

/** `value` when it is a JSON object (not an array, not null), else undefined. */
export const object = (value: unknown): Fields | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;

/** `value` when it is a tool name or id of a sane length; otherwise a {@link RecordProblem} naming the record. */
export function boundedToolField(value: string, field: string, what: string): string {
  if (value.length > MAX_TOOL_FIELD_CHARS) {
    throw new RecordProblem(`${what} has a ${field} longer than ${MAX_TOOL_FIELD_CHARS} characters`);
  }
  return value;
}

/** `text` clipped to the longest status detail (a status detail is never cut later). */
export const statusDetail = (text: string): string => clip(text, MAX_STATUS_DETAIL_CHARS);
