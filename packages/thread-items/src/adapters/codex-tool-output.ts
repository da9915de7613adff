import { partsText } from "./codex-content.js";
import { imagePlaceholder } from "./media-placeholder.js";
import { object } from "./record-fields.js";

/** A tool output as Codex recorded it, without Codex's own framing. */
export interface CodexToolOutput {
  /** What the tool printed or returned: the text after the header or inside the JSON envelope. */
  output: string;
  /** The process's exit code, when the output says it. */
  exitCode: number | undefined;
  /** Set when the command was still running when its output was recorded (its exit comes later). */
  running: boolean;
  /** The output says the call failed (`success: false`). */
  failed: boolean;
  /** Lines the tool printed, when Codex cut the output and said how long it was (`Total output lines: N`). */
  totalLines: number | undefined;
}

// The lines Codex writes above a command's output, up to a line `Output:`.
const HEADER_PREFIXES = [
  "Chunk ID: ",
  "Wall time: ",
  "Process exited with code ",
  "Process running with session ID ",
  "Original token count: ",
  "Total output lines: ",
  "Exit code: ",
];
const EXIT_CODE = /^-?\d+$/;
const MAX_HEADER_LINES = 8;
const LEADING_EXIT_CODE = /^Exit code: (-?\d+)/;
/**
 * The note Codex puts in front of an output it cut to fit the model's budget
 * (`codex-rs/utils/output-truncation`: `formatted_truncate_text`); older versions write only the
 * line count.
 */
const TRUNCATION_NOTE =
  /^(?:Warning: truncated output \(original token count: \d+\)\r?\n)?Total output lines: (\d+)\r?\n(?:\r?\n)?/;

/**
 * The output read, in one shape: `text` without Codex's truncation note, with the line count the
 * note gives.
 */
function toolOutput(
  text: string,
  exitCode: number | undefined,
  running: boolean,
  failed: boolean,
): CodexToolOutput {
  // Checked before the pattern: almost no output starts with the note.
  const note =
    text.startsWith("Total output lines: ") || text.startsWith("Warning: truncated output")
      ? TRUNCATION_NOTE.exec(text)
      : null;
  const totalLines = note ? Number(note[1]) : undefined;
  // A count no output has is not Codex's note: the text stays as it is.
  return note && Number.isSafeInteger(totalLines)
    ? { output: text.slice(note[0].length), exitCode, running, failed, totalLines }
    : { output: text, exitCode, running, failed, totalLines: undefined };
}

/** One MCP content block as text: its text, an image as a placeholder, a resource by its text or URI. */
function mcpBlockText(block: Record<string, unknown>): string {
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? block.text : "";
    case "image":
      return imagePlaceholder(block.mimeType, block.data);
    case "resource": {
      const resource = object(block.resource);
      if (typeof resource?.text === "string") return resource.text;
      return `[resource: ${String(resource?.uri ?? "")}]`;
    }
    case "resource_link":
      return `[resource: ${String(block.uri ?? "")}]`;
    default:
      return `[${String(block.type)}]`;
  }
}

/**
 * The text of an MCP tool's result as newer Codex records it under its header: the result's
 * content blocks as JSON (`[{"type":"text","text":"…"}]`). Undefined when `body` is not that.
 */
function mcpContentText(body: string): string | undefined {
  if (!body.startsWith("[{")) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
  const texts: string[] = [];
  for (const entry of parsed) {
    const block = object(entry);
    if (!block || typeof block.type !== "string") return undefined;
    texts.push(mcpBlockText(block));
  }
  return texts.join("\n");
}

/**
 * The output after Codex's header, without the truncation note. Under a header of a tool call
 * that ran no process (an MCP call: only `Wall time`), JSON content blocks are the result's blocks.
 */
function body(
  text: string,
  exitCode: number | undefined,
  running: boolean,
  ranProcess: boolean,
): CodexToolOutput {
  const mcp = ranProcess ? undefined : mcpContentText(text);
  return mcp === undefined
    ? toolOutput(text, exitCode, running, false)
    : toolOutput(mcp, exitCode, running, false);
}

/**
 * Splits Codex's header (`Chunk ID: …`, `Wall time: …`, `Process exited with code 2` or
 * `Process running with session ID …`, `Original token count: …`, `Output:`) from the output.
 * Text without a complete header is all output.
 */
function headed(text: string): CodexToolOutput {
  let start = 0;
  let exitCode: number | undefined;
  let running = false;
  let ranProcess = false;
  for (let lines = 0; lines < MAX_HEADER_LINES; lines++) {
    const newline = text.indexOf("\n", start);
    let end = newline === -1 ? text.length : newline;
    if (text.charCodeAt(end - 1) === 0x0d) end--;
    if (end - start === 7 && text.startsWith("Output:", start)) {
      if (lines === 0) break;
      return body(newline === -1 ? "" : text.slice(newline + 1), exitCode, running, ranProcess);
    }
    let prefix: string | undefined;
    for (const each of HEADER_PREFIXES) {
      if (text.startsWith(each, start)) {
        prefix = each;
        break;
      }
    }
    if (prefix === undefined || newline === -1) break;
    if (prefix === "Process exited with code " || prefix === "Exit code: ") {
      const code = text.slice(start + prefix.length, end);
      if (!EXIT_CODE.test(code)) break;
      exitCode = Number(code);
    }
    if (prefix === "Process running with session ID ") running = true;
    if (prefix !== "Wall time: ") ranProcess = true;
    start = newline + 1;
  }
  // Older shell outputs may open with the exit code alone.
  const exit = text.startsWith("Exit code: ") ? LEADING_EXIT_CODE.exec(text) : null;
  return toolOutput(text, exit ? Number(exit[1]) : undefined, false, false);
}

/**
 * Reads a `function_call_output` / `custom_tool_call_output` as Codex stores it: a JSON envelope
 * `{output, metadata: {exit_code}}`, text under a header (newer unified exec and MCP calls),
 * plain text, content items (text and images), or `{content, success}`. Codex's truncation note
 * (`Total output lines: N`) is taken off the output and kept as `totalLines`.
 */
export function readToolOutput(raw: unknown): CodexToolOutput {
  const fields = object(raw);
  if (fields) {
    const text =
      typeof fields.content === "string" ? fields.content : partsText(fields.content_items ?? fields.content);
    return toolOutput(text, undefined, false, fields.success === false);
  }
  if (Array.isArray(raw)) return toolOutput(partsText(raw), undefined, false, false);
  if (typeof raw !== "string") {
    return toolOutput(raw === undefined ? "" : JSON.stringify(raw), undefined, false, false);
  }
  if (raw.startsWith("{")) {
    try {
      const parsed = object(JSON.parse(raw));
      if (parsed && typeof parsed.output === "string") {
        const exitCode = object(parsed.metadata)?.exit_code;
        return toolOutput(parsed.output, typeof exitCode === "number" ? exitCode : undefined, false, false);
      }
    } catch {
      // Not the JSON envelope: the output is the text itself.
    }
  }
  return headed(raw);
}

/** Whether the output reports a failure: a non-zero exit code, or `success: false`. */
export const failedOutput = (output: CodexToolOutput): boolean =>
  output.failed || (output.exitCode !== undefined && output.exitCode !== 0);
