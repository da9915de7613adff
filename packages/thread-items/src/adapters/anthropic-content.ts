import { isSafeId, parseBlobRef } from "@stowage/core";
import {
  plainPostItem,
  statusItem,
  textItem,
  thinkingItem,
  toolCallItem,
  toolResultItem,
} from "../builders/build-items.js";
import { MAX_ITEM_ID_LENGTH } from "../schema/item-id.js";
import type { ThreadItem, ToolResultItem } from "../schema/thread-item-schema.js";
import { toolUseResultDetails, withSubagent } from "./claude-tool-use-result.js";
import { RecordProblem } from "./conversion.js";
import { userTextParts } from "./injected-text.js";
import { imagePlaceholder } from "./media-placeholder.js";
import { boundedToolField, statusDetail } from "./record-fields.js";

type Block = Record<string, unknown> & { type: string };

const isBlock = (value: unknown): value is Block =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  typeof (value as Block).type === "string";

/** Tool-use block types: client tools, server tools (web search), MCP connector tools. */
const TOOL_USE_TYPES = new Set(["tool_use", "server_tool_use", "mcp_tool_use"]);

/**
 * Gives the items their ids, made from the message's uuid: `<uuid>` for one item, `<uuid>:<n>` for
 * several; none when the uuid is not a safe id. In place: the array is the caller's new one.
 */
export function withIds(items: ThreadItem[], uuid: unknown): ThreadItem[] {
  if (items.length === 0 || typeof uuid !== "string" || !isSafeId(uuid, MAX_ITEM_ID_LENGTH)) return items;
  if (items.length === 1) items[0] = { id: uuid, ...items[0]! };
  else
    for (let index = 0; index < items.length; index++)
      items[index] = { id: `${uuid}:${index}`, ...items[index]! };
  return items;
}

/** The text of one content block: its text, an image as a placeholder, another block as `[<type>]`. */
function blockText(block: Block, imageBytes: number | undefined): string | undefined {
  if (block.type === "text") return typeof block.text === "string" ? block.text : undefined;
  if (block.type === "image") {
    const source = (block.source ?? {}) as Record<string, unknown>;
    const known = parseBlobRef(source.data) !== null ? imageBytes : undefined;
    return imagePlaceholder(source.media_type, source.data, known);
  }
  return `[${block.type}]`;
}

/**
 * The text of Anthropic content (a string, or blocks): texts joined by newlines, images as
 * placeholders. `imageBytes` sizes an image whose data is a blob ref (its size is not in the ref).
 */
export function contentText(content: unknown, imageBytes?: number): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content) {
    const text = isBlock(block) ? blockText(block, imageBytes) : undefined;
    if (text !== undefined) parts.push(text);
  }
  return parts.join("\n");
}

/** Thread items for the blocks of an assistant message: text, thinking, tool calls. Unknown blocks are skipped. */
export function assistantItems(content: unknown, what: string): ThreadItem[] {
  if (typeof content === "string") return content.trim() === "" ? [] : [textItem(content)];
  if (!Array.isArray(content)) throw new RecordProblem(`${what} has no message.content array`);
  const items: ThreadItem[] = [];
  for (const block of content) {
    if (!isBlock(block)) continue;
    if (block.type === "text" && typeof block.text === "string") {
      if (block.text.trim() !== "") items.push(textItem(block.text));
    } else if (block.type === "thinking" && typeof block.thinking === "string") {
      // Newer models may keep the reasoning encrypted: an empty text with only a signature.
      if (block.thinking.trim() !== "") items.push(thinkingItem(block.thinking));
    } else if (TOOL_USE_TYPES.has(block.type)) {
      if (typeof block.id !== "string" || typeof block.name !== "string") {
        throw new RecordProblem(`${what} has a ${block.type} block without a string id and name`);
      }
      items.push(
        toolCallItem({
          name: boundedToolField(block.name, "tool name", what),
          invocationId: boundedToolField(block.id, "tool id", what),
          input: block.input ?? {},
        }),
      );
    }
  }
  return items;
}

/**
 * A user message's parts: tool results, and the blocks a human (or the harness) wrote, one text
 * per block with images as placeholders. `toolUseResult` is the record's `toolUseResult` (the
 * SDK's `tool_use_result`): a subagent's figures go to `metadata.tool.subagent`, and an image's
 * reported size stands in for the size of image data already moved to a blob store.
 */
export function userParts(
  content: unknown,
  what: string,
  toolUseResult?: unknown,
): { results: ThreadItem[]; texts: string[] } {
  if (typeof content === "string") return { results: [], texts: [content] };
  if (!Array.isArray(content)) throw new RecordProblem(`${what} has no message.content string or array`);
  const results: ThreadItem[] = [];
  const texts: string[] = [];
  const details = toolUseResultDetails(toolUseResult);
  for (const block of content) {
    if (!isBlock(block)) continue;
    if (block.type === "tool_result" || block.type.endsWith("_tool_result")) {
      if (typeof block.tool_use_id !== "string") {
        throw new RecordProblem(`${what} has a ${block.type} block without a string tool_use_id`);
      }
      const result = toolResultItem({
        invocationId: boundedToolField(block.tool_use_id, "tool_use_id", what),
        output:
          block.type === "tool_result"
            ? contentText(block.content, details.imageBytes)
            : JSON.stringify(block.content ?? null),
        isError: block.is_error === true,
      });
      results.push(withSubagent(result as ToolResultItem, details.subagent));
    } else {
      const text = blockText(block, undefined);
      if (text !== undefined) texts.push(text);
    }
  }
  return { results, texts };
}

/**
 * What the typed text of a user message becomes: a post; a status of its own when someone other
 * than the human wrote it (`subagent_prompt`: the main agent's prompt to a subagent; a peer
 * session's message); or nothing (posts turned off).
 */
export type TypedTextAs = "post" | "nothing" | { status: string };

/**
 * The items of a user message's text blocks: a status for each piece the harness injected, and
 * the typed text as `typedAs` says, in the order they came; ids made from the message's uuid.
 */
export function promptItems(texts: readonly string[], uuid: unknown, typedAs: TypedTextAs): ThreadItem[] {
  const items: ThreadItem[] = [];
  for (const part of userTextParts(texts)) {
    if ("injected" in part) items.push(statusItem(part.injected));
    else if (typedAs === "post") items.push(plainPostItem(part.typed));
    else if (typedAs !== "nothing")
      items.push(statusItem({ status: typedAs.status, detail: statusDetail(part.typed) }));
  }
  return withIds(items, uuid);
}

// What Claude Code writes in place of a reply when the user pressed Esc.
const INTERRUPTED = /^\[Request interrupted by user[^\]]*\]$/;

/** The status for Claude Code's `[Request interrupted by user…]` text, or undefined for other text. */
export function interruption(text: string, uuid: unknown): ThreadItem[] | undefined {
  const trimmed = text.trim();
  if (!INTERRUPTED.test(trimmed)) return undefined;
  return withIds(
    [statusItem({ status: "interrupted", detail: trimmed, brief: "Interrupted by the user" })],
    uuid,
  );
}

/** `auto compaction at 155,000 tokens`, from a compact boundary's metadata (either spelling). */
export function compactionDetail(metadata: unknown): string | undefined {
  if (typeof metadata !== "object" || metadata === null) return undefined;
  const fields = metadata as Record<string, unknown>;
  const tokens = fields.preTokens ?? fields.pre_tokens;
  const trigger = typeof fields.trigger === "string" ? `${fields.trigger} compaction` : "compaction";
  return typeof tokens === "number" ? `${trigger} at ${tokens.toLocaleString("en-US")} tokens` : trigger;
}
