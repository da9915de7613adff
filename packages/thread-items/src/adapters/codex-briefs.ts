import { sanitizeText } from "@stowage/core";
import { clip, firstLine } from "../builders/brief-text.js";
import type { ToolCallItem, ToolResultItem } from "../schema/thread-item-schema.js";

const BRIEF_CHARS = 120;

/**
 * Control characters made visible, so that a brief shows keystrokes, not raw bytes: C0 in caret
 * notation (`\u0003` → `^C`, DEL → `^?`), C1 as hex (`\u009b` → `\x9b`).
 */
function visibleKeys(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => {
    const code = char.charCodeAt(0);
    if (code >= 0x80) return `\\x${code.toString(16)}`;
    return code === 0x7f ? "^?" : `^${String.fromCharCode(code + 0x40)}`;
  });
}

/**
 * The brief of a `write_stdin` call (input to a running command): the keys sent, control
 * characters made visible, and the session they went to; an empty write only waits for output.
 */
export function writeStdinBrief(input: unknown): string | undefined {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined;
  const fields = input as Record<string, unknown>;
  const session =
    typeof fields.session_id === "number" || typeof fields.session_id === "string"
      ? ` session ${fields.session_id}`
      : "";
  const chars = typeof fields.chars === "string" ? fields.chars : "";
  if (chars === "") return `write_stdin → wait for${session || " output"}`;
  return `write_stdin → ${clip(visibleKeys(chars), BRIEF_CHARS)}${session ? ` to${session}` : ""}`;
}

/** The item with another brief, sanitized like every brief the builders make. */
export const withBrief = <T extends ToolCallItem | ToolResultItem>(item: T, brief: string): T => ({
  ...item,
  content: [{ type: "text", text: sanitizeText(brief) }, ...item.content.slice(1)],
});

/**
 * A result whose output Codex cut to fit the model's budget, with the length Codex gave it
 * (`Total output lines: N`): the brief counts the tool's lines, not the lines Codex kept, and
 * `metadata.tool.total_lines` says how many there were.
 */
export function withTotalLines(item: ToolResultItem, totalLines: number): ToolResultItem {
  const counted = withBrief(
    item,
    `→ ${firstLine(item.metadata.tool.output)} (${totalLines} ${totalLines === 1 ? "line" : "lines"})`,
  );
  return {
    ...counted,
    metadata: { ...counted.metadata, tool: { ...counted.metadata.tool, total_lines: totalLines } },
  };
}
