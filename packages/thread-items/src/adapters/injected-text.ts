import { firstLine } from "../builders/brief-text.js";
import type { StatusInput } from "../builders/build-items.js";
import { statusDetail } from "./record-fields.js";

/**
 * What an agent harness writes into a user message although nobody typed it: Claude Code's
 * slash-command echo, local command output, `!` shell commands and their output, background-task
 * and background-shell notifications, system reminders, hook output, the IDE's opened file and
 * selection, and `#` memory notes. Each becomes a status item, never a post.
 * `"skip"`: injected, but nothing worth showing (an empty output, the command caveat).
 */
export type InjectedText = StatusInput | "skip";

/** One part of a user message: what a human typed, or one piece of text a harness injected. */
export type UserTextPart = { typed: string } | { injected: StatusInput };

// Tag names are kebab-case (`local-command-stdout`) or snake_case (`ide_opened_file`).
const OPENING_TAG = /<([a-z][a-z_-]*)(?:\s[^>]*)?>/y;
const SYSTEM_NOTIFICATION = "[SYSTEM NOTIFICATION";

/**
 * Elements a harness puts in front of what the human typed, in the same text block: the text
 * after the element is still the human's (`<ide_opened_file>…</ide_opened_file>\n\nfix this`).
 * Every other tag makes its whole block injected (a task notification ends with harness text).
 */
const CONTEXT_TAGS = new Set(["system-reminder", "ide_opened_file", "ide_selection"]);

/** Whether the character after `<tag` ends the tag's name: `>` or whitespace before attributes. */
const endsTagName = (code: number) =>
  code === 0x3e || code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;

/**
 * The first `<tag>…</tag>` of `text` from `from`: its body and where it ends; undefined when there
 * is none.
 * Found with `indexOf`, not a pattern, so that text opening a tag many times and never closing
 * it costs one pass, not one per opening.
 */
function element(text: string, tag: string, from = 0): { body: string; end: number } | undefined {
  const open = `<${tag}`;
  const close = `</${tag}>`;
  for (let at = text.indexOf(open, from); at !== -1; at = text.indexOf(open, at + 1)) {
    if (!endsTagName(text.charCodeAt(at + open.length))) continue;
    const bodyStart = text.indexOf(">", at + open.length) + 1;
    const closeAt = bodyStart === 0 ? -1 : text.indexOf(close, bodyStart);
    // No close after this opening means none after a later one either.
    if (closeAt === -1) return undefined;
    return { body: text.slice(bodyStart, closeAt), end: closeAt + close.length };
  }
  return undefined;
}

/** The text inside the first `<tag>…</tag>` of `text`; undefined when there is none. */
const inner = (text: string, tag: string): string | undefined => element(text, tag)?.body;

function output(status: string, words: string, body: string | undefined): InjectedText {
  const text = body?.trim() ?? "";
  if (text === "") return "skip";
  return { status, detail: statusDetail(text), brief: `${words}: ${firstLine(text)}` };
}

function slashCommand(text: string): InjectedText {
  const message = inner(text, "command-message")?.trim();
  const name = inner(text, "command-name")?.trim() || (message ? `/${message}` : "");
  const args = inner(text, "command-args")?.trim() ?? "";
  const command = args ? `${name} ${args}` : name;
  if (command === "") return "skip";
  return { status: "slash_command", detail: statusDetail(command), brief: firstLine(command) };
}

/** `<task-notification>` (background tasks, agents) and `<bash-notification>` (background shells of 2.0). */
function taskNotification(text: string): InjectedText {
  const state = inner(text, "status")?.trim();
  const summary = inner(text, "summary")?.trim();
  const head = state ? `Task ${state}` : "Task notification";
  return {
    status: "task_notification",
    detail: statusDetail(text.trim()),
    brief: summary ? `${head}: ${firstLine(summary)}` : head,
  };
}

/** The status for injected text opening with `tag` (the whole of `trimmed`), or undefined for an unknown tag. */
function tagged(tag: string, trimmed: string): InjectedText | undefined {
  switch (tag) {
    case "command-name":
    case "command-message":
    case "command-args":
      return slashCommand(trimmed);
    case "local-command-stdout":
      return output("command_output", "Command output", inner(trimmed, tag));
    case "local-command-stderr":
      return output("command_error", "Command error", inner(trimmed, tag));
    case "local-command-caveat":
      return "skip";
    case "bash-input": {
      const command = inner(trimmed, tag)?.trim() ?? "";
      if (command === "") return "skip";
      return {
        status: "user_shell_command",
        detail: statusDetail(command),
        brief: `! ${firstLine(command)}`,
      };
    }
    case "bash-stdout":
    case "bash-stderr": {
      const parts = [inner(trimmed, "bash-stdout"), inner(trimmed, "bash-stderr")];
      return output("user_shell_output", "Shell output", parts.filter((part) => part?.trim()).join("\n"));
    }
    case "task-notification":
    case "bash-notification":
      return taskNotification(trimmed);
    case "system-reminder":
      return output("system_reminder", "System reminder", inner(trimmed, tag));
    case "user-prompt-submit-hook":
      return output("hook_output", "Hook output", inner(trimmed, tag));
    case "user-memory-input":
      return output("memory_input", "Memory", inner(trimmed, tag));
    case "ide_opened_file":
    case "ide_selection":
      return output(tag, "IDE", inner(trimmed, tag));
    default:
      return undefined;
  }
}

const LEADING_SPACE = /\s*/y;

/**
 * Classifies the text from `start` (leading whitespace skipped) when it opens with a harness's
 * tag: its status, and where the text still to classify begins (after a {@link CONTEXT_TAGS}
 * element; the end of the text otherwise). Offsets, not slices, so that a block of many
 * elements is read in one pass.
 */
function classify(text: string, start: number): { injected: InjectedText; end: number } | undefined {
  LEADING_SPACE.lastIndex = start;
  LEADING_SPACE.exec(text);
  const from = LEADING_SPACE.lastIndex;
  if (text.startsWith(SYSTEM_NOTIFICATION, from)) {
    return {
      injected: output("system_notification", "System notification", text.slice(from)),
      end: text.length,
    };
  }
  OPENING_TAG.lastIndex = from;
  const tag = OPENING_TAG.exec(text)?.[1];
  if (tag === undefined) return undefined;
  // A context element ends where it closes (or, never closed, with the text); any other tag
  // makes the rest of the text injected.
  const end = CONTEXT_TAGS.has(tag) ? (element(text, tag, from)?.end ?? text.length) : text.length;
  const injected = tagged(tag, text.slice(from, end));
  return injected && { injected, end };
}

/**
 * Classifies the whole text of a user message: a status for text a harness injected (known by
 * its leading tag), or undefined for text a human typed. Only the tags above count, so a prompt
 * that happens to start with `<div>` is still a prompt.
 */
export function injectedText(text: string): InjectedText | undefined {
  return classify(text, 0)?.injected;
}

/**
 * Splits the text blocks of a user message into what a harness injected (one part per piece, in
 * order) and what a human typed (one part, where its first block was). Claude Code writes the
 * IDE's context and system reminders as blocks beside the typed prompt, so each block is
 * classified on its own, and a context element is peeled off the typed text it precedes.
 */
export function userTextParts(blocks: readonly string[]): UserTextPart[] {
  const parts: UserTextPart[] = [];
  const typed: string[] = [];
  let typedAt = -1;
  for (const block of blocks) {
    let start = 0;
    for (;;) {
      const found = classify(block, start);
      if (!found) {
        const text = start === 0 ? block : block.slice(start).replace(/^\s*\n/, "");
        if (text.trim() !== "") {
          if (typedAt === -1) typedAt = parts.length;
          typed.push(text);
        }
        break;
      }
      if (found.injected !== "skip") parts.push({ injected: found.injected });
      if (found.end >= block.length) break;
      start = found.end;
    }
  }
  if (typedAt !== -1) parts.splice(typedAt, 0, { typed: typed.join("\n") });
  return parts;
}
