import { describeValue, StowageError } from "@stowage/core";
import {
  plainPostItem,
  textItem,
  thinkingItem,
  toolCallItem,
  toolResultItem,
} from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { imagePlaceholder, parseDataUrl } from "./media-placeholder.js";

type Fields = Record<string, unknown>;

const isRecord = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";

function invalid(problem: string): StowageError {
  return new StowageError("INVALID_INPUT", `OpenCode export ${problem}`, { reason: "BAD_OPENCODE_EXPORT" });
}

/**
 * A file part (`{ type: "file", mime, filename?, url }`) as its placeholder: an image by its type
 * and size (its `data:` URL is never copied), another file by its name and type.
 */
function filePlaceholder(part: Fields): string {
  const mime = typeof part.mime === "string" ? part.mime : "";
  const data = parseDataUrl(part.url);
  if (mime.startsWith("image/")) return imagePlaceholder(mime, data?.base64);
  const name = typeof part.filename === "string" ? part.filename : "file";
  return `[file: ${name}${mime ? `, ${mime}` : ""}]`;
}

/** The tool part's call and, once it finished, its result (`completed`: output; `error`: error). */
function toolItems(part: Fields): ThreadItem[] {
  const state = isRecord(part.state) ? part.state : {};
  if (!nonEmpty(part.tool) || !nonEmpty(part.callID)) return [];
  const items: ThreadItem[] = [
    toolCallItem({ name: part.tool, invocationId: part.callID, input: state.input ?? {} }),
  ];
  if (state.status === "completed" && typeof state.output === "string") {
    items.push(toolResultItem({ invocationId: part.callID, output: state.output }));
  } else if (state.status === "error") {
    const error = typeof state.error === "string" ? state.error : "the tool failed";
    items.push(toolResultItem({ invocationId: part.callID, output: error, isError: true }));
  }
  return items;
}

function partItems(role: "user" | "assistant", part: Fields): ThreadItem[] {
  switch (part.type) {
    case "text": {
      // Synthetic text is what OpenCode adds to a message itself (a file's contents read for an @mention).
      if (typeof part.text !== "string" || part.text.trim() === "" || part.synthetic === true) return [];
      return [role === "user" ? plainPostItem(part.text) : textItem(part.text)];
    }
    case "file": {
      const text = filePlaceholder(part);
      return [role === "user" ? plainPostItem(text) : textItem(text)];
    }
    case "reasoning":
      return typeof part.text === "string" && part.text !== "" ? [thinkingItem(part.text)] : [];
    case "tool":
      return role === "assistant" ? toolItems(part) : [];
    default:
      // step-start, step-finish, snapshot, patch, agent, retry, compaction…: bookkeeping, not conversation.
      return [];
  }
}

/**
 * Thread items of an OpenCode session as `opencode export <sessionId>` prints it (OpenCode 1.x:
 * `{ info, messages: [{ info: { role }, parts: [...] }] }`), oldest first: a user message's text
 * parts as plain posts, an assistant's as text items, its reasoning as thinking, each tool part
 * as a call and (once finished) its result, file parts as placeholders; other parts are left
 * out. Accepts the export's JSON text, its bytes or the parsed value. Throws INVALID_INPUT
 * (reason `BAD_OPENCODE_EXPORT`) for what is not an export; unknown parts and fields are skipped.
 */
export function opencodeExportItems(exported: unknown): ThreadItem[] {
  let value = exported;
  if (typeof value === "string" || value instanceof Uint8Array) {
    try {
      value = JSON.parse(
        typeof value === "string" ? value : new TextDecoder("utf-8", { fatal: true }).decode(value),
      );
    } catch (err) {
      throw new StowageError("INVALID_INPUT", "OpenCode export is not valid UTF-8 JSON", {
        cause: err,
        reason: "BAD_OPENCODE_EXPORT",
      });
    }
  }
  if (!isRecord(value) || !Array.isArray(value.messages)) {
    throw invalid(`must be { info, messages: [...] }, got ${describeValue(value)}`);
  }
  const items: ThreadItem[] = [];
  for (const [index, message] of value.messages.entries()) {
    if (!isRecord(message) || !isRecord(message.info) || !Array.isArray(message.parts)) {
      throw invalid(`messages[${index}] must be { info: { role, … }, parts: [ … ] }`);
    }
    const role = message.info.role;
    if (role !== "user" && role !== "assistant") continue;
    for (const part of message.parts) if (isRecord(part)) items.push(...partItems(role, part));
  }
  return items;
}
