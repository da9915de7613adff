import { textItem, thinkingItem, toolCallItem, toolResultItem } from "../builders/build-items.js";
import { itemIdProblem } from "../schema/ids.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { RecordProblem } from "./conversion.js";
import { imagePlaceholder } from "./media-placeholder.js";

type Block = Record<string, unknown> & { type: string };

const isBlock = (value: unknown): value is Block =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  typeof (value as Block).type === "string";

/** Tool-use block types: client tools, server tools (web search), MCP connector tools. */
const TOOL_USE_TYPES = new Set(["tool_use", "server_tool_use", "mcp_tool_use"]);

/** Ids for the items made from one message: `<uuid>` for one item, `<uuid>:<n>` for several. */
export function itemIds(uuid: unknown, count: number): (string | undefined)[] {
  if (typeof uuid !== "string" || itemIdProblem(uuid) !== undefined) return Array(count).fill(undefined);
  return count === 1 ? [uuid] : Array.from({ length: count }, (_, index) => `${uuid}:${index}`);
}

/** Gives the items their ids, made from the message's uuid. */
export function withIds(items: ThreadItem[], uuid: unknown): ThreadItem[] {
  const ids = itemIds(uuid, items.length);
  return items.map((item, index) => (ids[index] === undefined ? item : { id: ids[index], ...item }));
}

/** The text of Anthropic content (a string, or blocks): texts joined by newlines, images as placeholders. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content) {
    if (!isBlock(block)) continue;
    if (block.type === "text" && typeof block.text === "string") parts.push(block.text);
    else if (block.type === "image") {
      const source = (block.source ?? {}) as Record<string, unknown>;
      parts.push(imagePlaceholder(source.media_type, source.data));
    } else parts.push(`[${block.type}]`);
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
      items.push(toolCallItem({ name: block.name, invocationId: block.id, input: block.input ?? {} }));
    }
  }
  return items;
}

/** A user message's parts: tool results, and the text a human typed (images as placeholders). */
export function userParts(content: unknown, what: string): { results: ThreadItem[]; text: string } {
  if (typeof content === "string") return { results: [], text: content };
  if (!Array.isArray(content)) throw new RecordProblem(`${what} has no message.content string or array`);
  const results: ThreadItem[] = [];
  const typed: unknown[] = [];
  for (const block of content) {
    if (!isBlock(block)) continue;
    if (block.type === "tool_result" || block.type.endsWith("_tool_result")) {
      if (typeof block.tool_use_id !== "string") {
        throw new RecordProblem(`${what} has a ${block.type} block without a string tool_use_id`);
      }
      results.push(
        toolResultItem({
          invocationId: block.tool_use_id,
          output:
            block.type === "tool_result" ? contentText(block.content) : JSON.stringify(block.content ?? null),
          isError: block.is_error === true,
        }),
      );
    } else typed.push(block);
  }
  return { results, text: contentText(typed) };
}

/** `auto compaction at 155,000 tokens`, from a compact boundary's metadata (either spelling). */
export function compactionDetail(metadata: unknown): string | undefined {
  if (typeof metadata !== "object" || metadata === null) return undefined;
  const fields = metadata as Record<string, unknown>;
  const tokens = fields.preTokens ?? fields.pre_tokens;
  const trigger = typeof fields.trigger === "string" ? `${fields.trigger} compaction` : "compaction";
  return typeof tokens === "number" ? `${trigger} at ${tokens.toLocaleString("en-US")} tokens` : trigger;
}
