import {
  type AgentVersion,
  compareAgentVersions,
  MAX_AGENT_VERSION_LENGTH,
  newerAgentVersion,
  parseAgentVersion,
} from "../agents/agent-version.js";
import type { SessionAgent } from "../agents/session-agent.js";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The newest version that `versionOf` finds in the lines of a JSONL file holding `key` (the
 * version's JSON key, quoted). The top-level field is one of the places `key` appears, so a line
 * is parsed only where `key` is followed by a value that may be newer than the newest so far (or
 * by one not written as a plain string, which only parsing reads): a transcript of one version is
 * parsed once, not line by line, and each line at most once. The bytes are searched as they are
 * (decoding 12 MB as UTF-8 would take longer than the rest); a line that is parsed is decoded
 * alone, and one that is not JSON is skipped (a capture never fails on it).
 */
function newestInLines(
  bytes: Uint8Array,
  key: string,
  versionOf: (line: Record<string, unknown>) => unknown,
): AgentVersion | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder("utf-8");
  let newest: AgentVersion | undefined;
  let parsedUpTo = 0;
  for (let at = buffer.indexOf(key); at !== -1; at = buffer.indexOf(key, at + key.length)) {
    if (at < parsedUpTo || !mayBeNewer(buffer, at + key.length, newest)) continue;
    const start = buffer.lastIndexOf(0x0a, at) + 1;
    let end = buffer.indexOf(0x0a, at);
    if (end === -1) end = buffer.byteLength;
    parsedUpTo = end;
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(buffer.subarray(start, end)));
    } catch {
      continue;
    }
    if (isRecord(value)) newest = newerAgentVersion(newest, parseAgentVersion(versionOf(value)));
  }
  return newest;
}

/**
 * False only when the key ending at `from` is followed by `:"`, a plain ASCII string (no escape)
 * and `"`, and that string is no version or one no newer than `newest`.
 */
function mayBeNewer(buffer: Buffer, from: number, newest: AgentVersion | undefined): boolean {
  if (!newest || buffer[from] !== 0x3a || buffer[from + 1] !== 0x22) return true;
  // The newest so far written again, as on nearly every line: no newer, and nothing to decode.
  const same = from + 2 + newest.text.length;
  if (buffer[same] === 0x22 && buffer.toString("latin1", from + 2, same) === newest.text) return false;
  const close = buffer.indexOf(0x22, from + 2);
  if (close === -1 || close - from - 2 > MAX_AGENT_VERSION_LENGTH + 1) return true;
  const raw = buffer.toString("latin1", from + 2, close);
  // An escape, or a byte beyond ASCII (read as latin1 here): only parsing reads it right.
  if (!/^[\x20-\x7e]*$/.test(raw) || raw.includes("\\")) return true;
  const version = parseAgentVersion(raw);
  return version !== undefined && compareAgentVersions(version, newest) > 0;
}

/**
 * The agent CLI's version a session records, read from what was captured (`main`: Claude Code's
 * main transcript, Codex's rollout, OpenCode's export), the newest when it records several (a
 * session resumed by a newer CLI). Only the top-level fields the agents write count: a `version`
 * nested in a message or tool result is someone else's. Undefined when it records none.
 * - Claude Code: every entry's `version`;
 * - Codex: `payload.cli_version` of its `session_meta` lines;
 * - OpenCode: the export's `info.version`.
 */
export function sessionAgentVersion(agent: SessionAgent, main: Uint8Array): string | undefined {
  if (agent === "claude-code") return newestInLines(main, '"version"', (line) => line.version)?.text;
  if (agent === "codex") {
    return newestInLines(main, '"cli_version"', (line) =>
      line.type === "session_meta" && isRecord(line.payload) ? line.payload.cli_version : undefined,
    )?.text;
  }
  let exported: unknown;
  try {
    exported = JSON.parse(new TextDecoder("utf-8").decode(main));
  } catch {
    return undefined;
  }
  return isRecord(exported) && isRecord(exported.info)
    ? parseAgentVersion(exported.info.version)?.text
    : undefined;
}
