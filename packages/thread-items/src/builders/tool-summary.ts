import { sanitizeText } from "@stowage/core";
import { BRIEF_LINE_MAX_CHARS, clip, firstLine } from "./brief-text.js";

type Input = Record<string, unknown>;
type Summarizer = (input: Input) => string;

const text = (value: unknown): string => (typeof value === "string" ? firstLine(value) : "");
const within = (what: string, where: unknown): string => {
  const place = text(where);
  return what && place ? `${what} in ${place}` : what;
};

// `["bash", "-lc", "npm test"]` is shown as `npm test`: the shell wrapper says nothing.
function commandArray(value: unknown): string {
  if (!Array.isArray(value) || !value.every((part) => typeof part === "string")) return text(value);
  const parts = value as string[];
  const shell = parts.length === 3 && /(^|\/)(ba|z|da)?sh$/.test(parts[0]!) && /^-l?c$/.test(parts[1]!);
  return firstLine(shell ? parts[2]! : parts.join(" "));
}

// An apply_patch body names the files it touches on `*** Add|Update|Delete File: <path>` lines.
function patchFiles(value: unknown): string {
  if (typeof value !== "string") return "";
  const files = [...value.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((match) =>
    sanitizeText(match[1]!),
  );
  if (files.length === 0) return "";
  return files.length === 1 ? files[0]! : `${files[0]} (+${files.length - 1} more)`;
}

const countOf = (value: unknown, noun: string): string =>
  Array.isArray(value) ? `${value.length} ${noun}${value.length === 1 ? "" : "s"}` : "";

/** One-line summaries of the common tools of Claude Code and Codex, keyed by tool name. */
const SUMMARIZERS: Readonly<Record<string, Summarizer>> = {
  Bash: (input) => text(input.command),
  BashOutput: (input) => text(input.bash_id),
  KillShell: (input) => text(input.shell_id),
  Read: (input) => text(input.file_path),
  Write: (input) => text(input.file_path),
  Edit: (input) => text(input.file_path),
  MultiEdit: (input) => text(input.file_path),
  NotebookEdit: (input) => text(input.notebook_path),
  Glob: (input) => within(text(input.pattern), input.path),
  Grep: (input) => within(text(input.pattern), input.path ?? input.glob),
  WebFetch: (input) => text(input.url),
  WebSearch: (input) => text(input.query),
  Task: (input) => text(input.description),
  Agent: (input) => text(input.description),
  Skill: (input) => text(input.skill),
  SlashCommand: (input) => text(input.command),
  TodoWrite: (input) => countOf(input.todos, "todo"),
  AskUserQuestion: (input) =>
    Array.isArray(input.questions) ? text((input.questions[0] as Input | undefined)?.question) : "",
  ExitPlanMode: (input) => text(input.plan),
  shell: (input) => commandArray(input.command),
  local_shell: (input) => commandArray(input.command),
  "container.exec": (input) => commandArray(input.command),
  exec_command: (input) => text(input.cmd),
  write_stdin: (input) => text(input.chars),
  apply_patch: (input) => patchFiles(input.input ?? input.patch),
  update_plan: (input) => countOf(input.plan, "step"),
  view_image: (input) => text(input.path),
  web_search: (input) => text(input.query),
};

/** Input fields tried in order for a tool without its own summarizer (MCP tools, new tools). */
const GENERIC_KEYS = [
  "command",
  "cmd",
  "file_path",
  // OpenCode's read, write and edit tools.
  "filePath",
  "path",
  "notebook_path",
  "pattern",
  "query",
  "url",
  "description",
  "prompt",
  "name",
];

/**
 * A one-line summary of a tool call's input for its brief: the command of a shell call, the path
 * of a file tool, the pattern of a search… "" when nothing short describes it. Sanitized: it is
 * made only of {@link firstLine}s, sanitized file names and words of its own, so a builder puts
 * it in a brief without scanning it again.
 */
export function summarizeToolInput(name: string, input: unknown): string {
  if (typeof input === "string") return name === "apply_patch" ? patchFiles(input) : firstLine(input);
  if (typeof input !== "object" || input === null || Array.isArray(input)) return "";
  const fields = input as Input;
  const own = SUMMARIZERS[name]?.(fields);
  if (own) return clip(own, BRIEF_LINE_MAX_CHARS);
  for (const key of GENERIC_KEYS) {
    const value = fields[key];
    if (key === "command" && Array.isArray(value)) return clip(commandArray(value), BRIEF_LINE_MAX_CHARS);
    if (typeof value === "string" && value.trim() !== "") return firstLine(value);
  }
  return "";
}
