import { firstLine } from "../builders/brief-text.js";
import type { StatusInput } from "../builders/build-items.js";
import { object, statusDetail } from "./record-fields.js";

/**
 * Text Codex writes into user-role messages although nobody typed it (`codex-rs/core`
 * `contextual_user_message.rs`): each is one content item that opens with its start marker and
 * ends with its end marker, in any case. `"skip"`: context with nothing to show (instructions,
 * the environment, lists of plugins and subagents), or what an event already reports (a user's
 * `!` command: `exec_command_end`; an interrupted turn: `turn_aborted`).
 */
const FRAGMENTS: readonly { start: string; end: string; as: "skip" | ((body: string) => StatusInput) }[] = [
  { start: "# AGENTS.md instructions for ", end: "</INSTRUCTIONS>", as: "skip" },
  { start: "<user_instructions>", end: "</user_instructions>", as: "skip" },
  { start: "<environment_context>", end: "</environment_context>", as: "skip" },
  { start: "<additional_context>", end: "</additional_context>", as: "skip" },
  { start: "<plugins>", end: "</plugins>", as: "skip" },
  { start: "<subagents>", end: "</subagents>", as: "skip" },
  { start: "<user_shell_command>", end: "</user_shell_command>", as: "skip" },
  { start: "<turn_aborted>", end: "</turn_aborted>", as: "skip" },
  { start: "<skill>", end: "</skill>", as: skillLoaded },
  { start: "<subagent_notification>", end: "</subagent_notification>", as: subagentNotification },
];

/** `<skill>\n<name>…</name>\n<path>…</path>\n---\n<the skill's text></skill>`: which skill was loaded. */
function skillLoaded(body: string): StatusInput {
  const name = /<name>([^<]*)<\/name>/.exec(body)?.[1]?.trim();
  const path = /<path>([^<]*)<\/path>/.exec(body)?.[1]?.trim();
  const detail = path || name;
  return {
    status: "skill_loaded",
    ...(detail ? { detail: statusDetail(detail) } : {}),
    brief: name ? `Skill loaded: ${firstLine(name)}` : "Skill loaded",
  };
}

/** `<subagent_notification>{"agent_id"|"agent_path": …, "status": …}</subagent_notification>`. */
function subagentNotification(body: string): StatusInput {
  const json = body.trim();
  let agent: unknown;
  let state: unknown;
  try {
    const fields = object(JSON.parse(json));
    agent = fields?.agent_id ?? fields?.agent_path;
    // An agent status is a word (`"running"`) or a word with its message (`{"completed": "…"}`).
    const status = fields?.status;
    state = typeof status === "string" ? status : Object.keys(object(status) ?? {})[0];
  } catch {
    // Not the JSON Codex writes: the body is still the detail.
  }
  const who = typeof agent === "string" && agent !== "" ? `Subagent ${firstLine(agent)}` : "Subagent";
  return {
    status: "subagent_notification",
    ...(json ? { detail: statusDetail(json) } : {}),
    brief: typeof state === "string" ? `${who}: ${firstLine(state)}` : who,
  };
}

/** The fragment `text` is, as a status (or `"skip"`); undefined for text a human typed. */
export function injectedFragment(text: string): StatusInput | "skip" | undefined {
  const trimmed = text.trim();
  // Every marker opens with `<` or `#`: most typed text is known at its first character.
  const first = trimmed.charCodeAt(0);
  if (first !== 0x3c /* < */ && first !== 0x23 /* # */) return undefined;
  for (const fragment of FRAGMENTS) {
    if (
      trimmed.length >= fragment.start.length + fragment.end.length &&
      trimmed.slice(0, fragment.start.length).toLowerCase() === fragment.start.toLowerCase() &&
      trimmed.slice(-fragment.end.length).toLowerCase() === fragment.end.toLowerCase()
    ) {
      return fragment.as === "skip"
        ? "skip"
        : fragment.as(trimmed.slice(fragment.start.length, trimmed.length - fragment.end.length));
    }
  }
  return undefined;
}

// Codex's desktop app and IDE extension put what the user attached above the request.
const ATTACHED_CONTEXT = /^\s*# (Files mentioned by the user|Context from my IDE setup):/;
const REQUEST_HEADING = "## My request for Codex:";

/**
 * A prompt from Codex's desktop app or IDE extension, split: the request the human typed, and a
 * status for the context the app put above it (`# Files mentioned by the user:` with one
 * `## <name>: <path>` per file, or `# Context from my IDE setup:` with the active file and open
 * tabs). Undefined for a prompt without that frame.
 */
export function attachedContext(text: string): { context: StatusInput; request: string } | undefined {
  if (!ATTACHED_CONTEXT.test(text)) return undefined;
  const at = text.indexOf(REQUEST_HEADING);
  if (at === -1) return undefined;
  const context = text.slice(0, at).trim();
  const request = text.slice(at + REQUEST_HEADING.length).replace(/^[ \t]*\r?\n/, "");
  const files = /^# Files mentioned/.test(context);
  const headings = [...context.matchAll(/^## (.+)$/gm)].map((match) => match[1]!);
  const names = files ? headings.map((heading) => heading.replace(/:.*$/, "")) : headings.slice(0, 1);
  const words = files ? "Files mentioned" : "IDE context";
  const brief = names.length > 0 ? `${words}: ${names.join(", ")}` : words;
  return {
    context: { status: "prompt_context", detail: statusDetail(context), brief: firstLine(brief) },
    request,
  };
}
