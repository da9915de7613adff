import { pathSegmentProblem } from "@stowage/core";

/**
 * Archive entries of a Claude Code session that live in the config directory rather than in the
 * project directory start with this. A project-directory entry never does: it is the transcript
 * or a file under the companion directory (a session id starts with a letter or digit) or a
 * legacy `agent-<id>.jsonl`.
 */
export const CONFIG_DIR_ENTRY_PREFIX = "~config/";

/**
 * The config directory's per-session directories, each `<name>/<sessionId>/`, found by diffing
 * the config directory before and after a real Claude Code 2.1.330 session
 * (`test/agent-environment.int.test.ts`): rewind checkpoints (`<hash>@v<n>` backups of edited
 * files), the task list (`<n>.json`, what the Task tools keep) and the environment that
 * SessionStart hooks set for the session's shell commands.
 */
export const CLAUDE_SESSION_DIRECTORIES = ["file-history", "tasks", "session-env"] as const;

/** A plan's file name without `.md`: Claude Code's slug, lowercase words joined by `-`. */
const PLAN_SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** Longest slug taken from a transcript: a file name with `-agent-<id>.md` after it must still fit. */
const MAX_PLAN_SLUG_LENGTH = 128;
const AGENT_ID = "[A-Za-z0-9_-]{1,128}";

/** Whether `value` is a plan slug this module captures and restores. */
export function isPlanSlug(value: unknown): value is string {
  return typeof value === "string" && value.length <= MAX_PLAN_SLUG_LENGTH && PLAN_SLUG.test(value);
}

/**
 * The plan files of a session whose transcript names `slug`: `plans/<slug>.md`, and
 * `plans/<slug>-agent-<agentId>.md` for its subagents' plans.
 */
export function isPlanFileOf(name: string, slug: string): boolean {
  if (name === `${slug}.md`) return true;
  return (
    name.startsWith(`${slug}-agent-`) &&
    new RegExp(`^${AGENT_ID}\\.md$`).test(name.slice(slug.length + "-agent-".length))
  );
}

/** `todos/<sessionId>-agent-<agentId>.json`: the TodoWrite list of versions that had that tool. */
export function isTodoFileOf(name: string, sessionId: string): boolean {
  const prefix = `${sessionId}-agent-`;
  return name.startsWith(prefix) && new RegExp(`^${AGENT_ID}\\.json$`).test(name.slice(prefix.length));
}

/**
 * Files of a per-session directory that are the machine's, never the session's: the task list's
 * `.lock` is held by a running CLI (a resumed run makes its own).
 */
export function isMachineLocalSessionFile(directory: string, name: string): boolean {
  return directory === "tasks" && name.startsWith(".");
}

/**
 * Why `rest` (an entry's path after {@link CONFIG_DIR_ENTRY_PREFIX}) is not one of `sessionId`'s
 * files in the config directory, or undefined when it is: `file-history/<sessionId>/<name>`,
 * `tasks/<sessionId>/<name>.json`, `session-env/<sessionId>/<name>`,
 * `todos/<sessionId>-agent-<id>.json` or `plans/<slug>.md` (`<slug>-agent-<id>.md`). A plan
 * names no session: restore replaces one already there only when the session's transcript in
 * place names its slug.
 */
export function configEntryProblem(rest: string, sessionId: string): string | undefined {
  const segments = rest.split("/");
  const name = segments.at(-1) ?? "";
  const expected = `"${CONFIG_DIR_ENTRY_PREFIX}" entries must be file-history/, tasks/ or session-env/ "${sessionId}/<file>", todos/"${sessionId}-agent-<id>.json" or plans/"<slug>.md"`;
  if (segments.some((segment) => pathSegmentProblem(segment) !== undefined)) return expected;
  const [directory] = segments;
  if (segments.length === 3 && (CLAUDE_SESSION_DIRECTORIES as readonly string[]).includes(directory!)) {
    if (segments[1] !== sessionId) return expected;
    if (isMachineLocalSessionFile(directory!, name)) return `${expected}; ${name} is machine-local`;
    if (directory === "tasks" && !name.endsWith(".json")) return expected;
    return undefined;
  }
  if (segments.length !== 2) return expected;
  if (directory === "todos") return isTodoFileOf(name, sessionId) ? undefined : expected;
  if (directory === "plans") {
    const slug = name.replace(/(?:-agent-[A-Za-z0-9_-]{1,128})?\.md$/, "");
    return isPlanSlug(slug) && isPlanFileOf(name, slug) ? undefined : expected;
  }
  return expected;
}

const SLUG_KEY = Buffer.from('"slug":"');

/** `[a-z0-9-]`: the bytes a slug is matched with before the line that holds it is parsed. */
const isSlugByte = (byte: number | undefined) =>
  byte !== undefined && ((byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) || byte === 0x2d);

/**
 * The plan slugs a transcript names: the top-level `slug` of its lines (Claude Code writes it on
 * every line once the session has one). A `slug` quoted inside a line (a tool result showing
 * another session's transcript) is escaped in the JSON text and never matches; only lines that
 * hold the key with a slug not seen yet are parsed. The bytes are searched as they are (decoding
 * a 10 MB transcript as UTF-8 took 45 ms, most of a capture's own work); a line parsed is decoded
 * alone, as it reads in the whole text.
 */
export function transcriptPlanSlugs(transcript: Uint8Array): string[] {
  const bytes = Buffer.from(transcript.buffer, transcript.byteOffset, transcript.byteLength);
  const slugs = new Set<string>();
  // Where the last line parsed starts: a line is parsed once, however many keys it holds (a
  // hostile line of a thousand unescaped `"slug":"…"` is not parsed a thousand times).
  let parsedLine = -1;
  let at = bytes.indexOf(SLUG_KEY);
  while (at !== -1) {
    const from = at + SLUG_KEY.length;
    let close = from;
    while (close - from <= MAX_PLAN_SLUG_LENGTH && isSlugByte(bytes[close])) close++;
    if (close === from || close - from > MAX_PLAN_SLUG_LENGTH || bytes[close] !== 0x22) {
      at = bytes.indexOf(SLUG_KEY, at + 1);
      continue;
    }
    const candidate = bytes.toString("latin1", from, close);
    const line = bytes.lastIndexOf(0x0a, at) + 1;
    if (!slugs.has(candidate) && line !== parsedLine) {
      parsedLine = line;
      const slug = topLevelSlug(bytes, line, at);
      if (isPlanSlug(slug)) slugs.add(slug);
    }
    at = bytes.indexOf(SLUG_KEY, close + 1);
  }
  return [...slugs];
}

/** The `slug` of the JSON line from `start` holding byte `at`, or undefined when the line is not JSON. */
function topLevelSlug(bytes: Buffer, start: number, at: number): unknown {
  let end = bytes.indexOf(0x0a, at);
  if (end === -1) end = bytes.byteLength;
  // A byte-order mark is dropped only at the start of the transcript, as a decoder of the whole does.
  const decoder = new TextDecoder("utf-8", { ignoreBOM: start > 0 });
  try {
    return (JSON.parse(decoder.decode(bytes.subarray(start, end))) as { slug?: unknown } | null)?.slug;
  } catch {
    return undefined;
  }
}
