import { describeValue, isSha256Hex, StowageError } from "@stowage/core";
import { parseAgentVersion } from "../agents/agent-version.js";
import { isSessionAgent, SESSION_AGENTS, type SessionAgent } from "../agents/session-agent.js";
import { isSessionId } from "../agents/session-id.js";
import { PROJECT_KEY_PATTERN } from "../claude/project-key.js";
import { codexRolloutPathProblem } from "../codex/rollout-path.js";
import { entryPathProblem } from "./entry-path.js";

/**
 * Session archive, format version 1 (all integers big-endian):
 *
 * | bytes | content                                                   |
 * | ----- | --------------------------------------------------------- |
 * | 8     | magic `STOWSESS`                                          |
 * | 1     | format version (1)                                        |
 * | 4     | manifest length N                                         |
 * | N     | manifest, UTF-8 JSON ({@link SessionArchiveManifest})     |
 * | …     | each file's bytes, back to back, in manifest order        |
 *
 * The whole container is then compressed with the blob's codec. The manifest comes first so that
 * a reader knows every path, size and sha256 before it writes a byte.
 */
export const ARCHIVE_MAGIC = "STOWSESS";
/** The container version this package writes and reads. */
export const ARCHIVE_FORMAT_VERSION = 1;
/** Magic, version and manifest length. */
export const ARCHIVE_PREAMBLE_BYTES = 13;
/** Largest manifest accepted, in bytes. */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** Most files one archive may hold. */
export const MAX_ARCHIVE_ENTRIES = 10_000;
/**
 * Latest modification time a manifest may give a file: 9999-12-31T23:59:59.999Z. Later times
 * (`1e300`) are refused as INVALID_INPUT rather than failing in the file system.
 */
export const MAX_ENTRY_MTIME_MS = 253_402_300_799_999;
/** Default cap on a session's total (decompressed) size, for capture and restore: 256 MiB. */
export const DEFAULT_MAX_SESSION_BYTES = 256 * 1024 * 1024;

export interface SessionArchiveEntry {
  /**
   * `/`-separated, relative to where the agent keeps the session: Claude Code's project
   * directory, Codex's `sessions/` directory; OpenCode's single entry is `<sessionId>.json`.
   */
  path: string;
  size: number;
  /** Lowercase hex SHA-256 of the file's bytes. */
  sha256: string;
  /** Modification time (ms since the epoch), restored with the file. */
  mtimeMs: number;
}

export interface SessionArchiveManifest {
  format: "stowage-session";
  version: typeof ARCHIVE_FORMAT_VERSION;
  /** The agent whose files these are. */
  agent: SessionAgent;
  /**
   * The agent CLI's version the session itself records, the newest when it records several
   * (Claude Code's entries' `version`, Codex's `session_meta.payload.cli_version`, OpenCode's
   * export `info.version`); absent when it records none, and in archives captured before it was
   * recorded. A restore compares it with the installed CLI's (see `checkAgentVersion`).
   */
  agentVersion?: string;
  sessionId: string;
  /** Claude Code only (and always there): the project key the session was captured under. */
  projectKey?: string;
  /** ISO 8601 time of capture. */
  capturedAt: string;
  files: SessionArchiveEntry[];
}

const encoder = new TextEncoder();
const magicBytes = encoder.encode(ARCHIVE_MAGIC);

/** Magic, version, manifest length and manifest: the bytes before the files. */
export function encodeArchiveHeader(manifest: SessionArchiveManifest): Uint8Array {
  return encodeHeader(manifest, ARCHIVE_FORMAT_VERSION);
}

/** Magic, `version`, the length of `manifest` as JSON, and that JSON. */
export function encodeHeader(manifest: object, version: number): Uint8Array {
  const json = encoder.encode(JSON.stringify(manifest));
  if (json.byteLength > MAX_MANIFEST_BYTES) {
    throw new StowageError(
      "TOO_LARGE",
      `session manifest is ${json.byteLength} bytes, over ${MAX_MANIFEST_BYTES}`,
      { details: { limit: MAX_MANIFEST_BYTES, size: json.byteLength } },
    );
  }
  const header = new Uint8Array(ARCHIVE_PREAMBLE_BYTES + json.byteLength);
  header.set(magicBytes, 0);
  header[8] = version;
  new DataView(header.buffer).setUint32(9, json.byteLength);
  header.set(json, ARCHIVE_PREAMBLE_BYTES);
  return header;
}

/** Checks magic and version (`version`, default this package's archive version); returns the manifest length. */
export function readPreamble(preamble: Uint8Array, expectedVersion: number = ARCHIVE_FORMAT_VERSION): number {
  if (!magicBytes.every((byte, i) => preamble[i] === byte)) {
    throw new StowageError("INVALID_INPUT", "blob is not a Stowage session archive (bad magic)", {
      reason: "NOT_AN_ARCHIVE",
    });
  }
  const version = preamble[8];
  if (version !== expectedVersion) {
    throw new StowageError(
      "INVALID_INPUT",
      `session archive format version ${version} is not supported; this package reads version ${ARCHIVE_FORMAT_VERSION}`,
      { reason: "UNSUPPORTED_VERSION", details: { version } },
    );
  }
  const length = new DataView(preamble.buffer, preamble.byteOffset, preamble.byteLength).getUint32(9);
  if (length === 0 || length > MAX_MANIFEST_BYTES) {
    throw new StowageError(
      length === 0 ? "INVALID_INPUT" : "TOO_LARGE",
      `session manifest length must be 1 to ${MAX_MANIFEST_BYTES} bytes, got ${length}`,
      { reason: "BAD_MANIFEST_LENGTH", details: { limit: MAX_MANIFEST_BYTES } },
    );
  }
  return length;
}

export function invalid(problem: string, limit?: number): StowageError {
  return new StowageError("INVALID_INPUT", `session manifest ${problem}`, {
    reason: "BAD_MANIFEST",
    ...(limit === undefined ? {} : { details: { limit } }),
  });
}

function checkEntry(
  value: unknown,
  index: number,
  sessionId: string,
  agent: SessionAgent,
): SessionArchiveEntry {
  if (typeof value !== "object" || value === null) throw invalid(`files[${index}] must be an object`);
  const { path, size, sha256, mtimeMs } = value as Record<string, unknown>;
  const problem = entryPathProblem(path, sessionId, agent);
  if (problem) {
    throw new StowageError(
      "INVALID_INPUT",
      `session archive entry path ${problem}, got ${describeValue(path)}`,
      {
        reason: "UNSAFE_ENTRY_PATH",
      },
    );
  }
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
    throw invalid(`files[${index}].size must be a non-negative integer, got ${describeValue(size)}`);
  }
  if (!isSha256Hex(sha256)) {
    throw invalid(`files[${index}].sha256 must be 64 lowercase hex characters, got ${describeValue(sha256)}`);
  }
  if (
    typeof mtimeMs !== "number" ||
    !Number.isFinite(mtimeMs) ||
    mtimeMs < 0 ||
    mtimeMs > MAX_ENTRY_MTIME_MS
  ) {
    throw invalid(
      `files[${index}].mtimeMs must be a time from 0 to ${MAX_ENTRY_MTIME_MS} (ms since the epoch), got ${describeValue(mtimeMs)}`,
      MAX_ENTRY_MTIME_MS,
    );
  }
  return { path: path as string, size, sha256, mtimeMs };
}

/** Two entries at one path, or a file where another entry needs a directory. */
function checkLayout(files: readonly SessionArchiveEntry[]): void {
  const paths = new Set<string>();
  for (const { path } of files) {
    if (paths.has(path)) throw invalid(`lists ${describeValue(path)} twice`);
    paths.add(path);
  }
  for (const { path } of files) {
    for (let slash = path.indexOf("/"); slash >= 0; slash = path.indexOf("/", slash + 1)) {
      if (paths.has(path.slice(0, slash))) {
        throw invalid(`lists ${describeValue(path.slice(0, slash))} as a file and as a directory`);
      }
    }
  }
}

/** The manifest's JSON object, or INVALID_INPUT (`BAD_MANIFEST`). */
export function decodeManifestJson(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    throw new StowageError("INVALID_INPUT", "session manifest is not valid UTF-8 JSON", {
      cause: err,
      reason: "BAD_MANIFEST",
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalid("must be a JSON object");
  return value as Record<string, unknown>;
}

/**
 * The fields every manifest version shares, checked: format, agent, session id, project key,
 * capture time, and the files (safe paths of the agent and session, sizes, digests, times, no
 * duplicate or clashing paths, a main transcript). `compatibility`: the single transcript of a
 * blob in the compatibility format, which records no project. The version and the total size are
 * the caller's to check.
 */
export function checkManifestRecord(
  record: Record<string, unknown>,
  options: { compatibility?: boolean } = {},
): SessionArchiveManifest {
  if (record.format !== "stowage-session")
    throw invalid(`format must be "stowage-session", got ${describeValue(record.format)}`);
  // Archives written before other agents existed all say "claude-code".
  const { agent } = record;
  if (!isSessionAgent(agent)) {
    throw invalid(`agent must be one of ${SESSION_AGENTS.join(", ")}, got ${describeValue(agent)}`);
  }
  if (!isSessionId(record.sessionId))
    throw invalid(`sessionId must be a safe id, got ${describeValue(record.sessionId)}`);
  const { projectKey } = record;
  if (options.compatibility) {
    if (agent !== "claude-code" || projectKey !== undefined) {
      throw invalid("of a transcript in the compatibility format is Claude Code's and records no project");
    }
  } else if (agent === "claude-code") {
    if (typeof projectKey !== "string" || !PROJECT_KEY_PATTERN.test(projectKey)) {
      throw invalid(
        `projectKey must be 1 to 255 characters of [A-Za-z0-9-], got ${describeValue(projectKey)}`,
      );
    }
  } else if (projectKey !== undefined) {
    throw invalid(`projectKey is for Claude Code sessions only, got one for ${agent}`);
  }
  if (typeof record.capturedAt !== "string" || Number.isNaN(Date.parse(record.capturedAt))) {
    throw invalid(`capturedAt must be an ISO 8601 time, got ${describeValue(record.capturedAt)}`);
  }
  const { sessionId } = record;
  if (
    !Array.isArray(record.files) ||
    record.files.length === 0 ||
    record.files.length > MAX_ARCHIVE_ENTRIES
  ) {
    throw invalid(`files must be an array of 1 to ${MAX_ARCHIVE_ENTRIES} entries`, MAX_ARCHIVE_ENTRIES);
  }
  const files = record.files.map((entry, index) => checkEntry(entry, index, sessionId, agent));
  checkLayout(files);
  if (agent === "claude-code" && !files.some((entry) => entry.path === `${sessionId}.jsonl`)) {
    throw invalid(`has no main transcript "${sessionId}.jsonl"`);
  }
  // A Codex session is its rollout, then its subagents' rollouts.
  if (agent === "codex" && codexRolloutPathProblem(files[0]!.path, sessionId) !== undefined) {
    throw invalid(`of a codex session must list its own rollout first, got ${describeValue(files[0]!.path)}`);
  }
  if (
    agent === "codex" &&
    files.slice(1).some((entry) => codexRolloutPathProblem(entry.path, sessionId) === undefined)
  ) {
    throw invalid("of a codex session must list one rollout of the session itself, then its subagents'");
  }
  // An OpenCode session is its export, then its child sessions' exports.
  if (agent === "opencode" && files[0]!.path !== `${sessionId}.json`) {
    throw invalid(
      `of an opencode session must list its own export first, got ${describeValue(files[0]!.path)}`,
    );
  }
  // A compatibility-format transcript is one file.
  if (options.compatibility && files.length !== 1) {
    throw invalid(`of a ${agent} session must list exactly one file, got ${files.length}`);
  }
  // Only a version, as the capture records it: anything else (a hand-written or hostile manifest)
  // is an unknown version, never an error, so the session restores unchecked.
  const agentVersion = parseAgentVersion(record.agentVersion)?.text;
  return {
    format: "stowage-session",
    version: ARCHIVE_FORMAT_VERSION,
    agent,
    ...(agentVersion === undefined ? {} : { agentVersion }),
    sessionId,
    ...(agent === "claude-code" && !options.compatibility ? { projectKey: projectKey as string } : {}),
    capturedAt: record.capturedAt,
    files,
  };
}

/** TOO_LARGE (`DECOMPRESSED_TOO_LARGE`) when an archive declares more than `maxBytes` decompressed. */
export function assertDeclaredSize(total: number, maxBytes: number): void {
  if (total > maxBytes) {
    throw new StowageError(
      "TOO_LARGE",
      `session archive declares ${total} bytes, over the limit of ${maxBytes} bytes (maxBytes)`,
      { reason: "DECOMPRESSED_TOO_LARGE", details: { limit: maxBytes, declared: total } },
    );
  }
}

/**
 * Parses and validates a manifest: shape, safe entry paths, sizes, digests, a main transcript,
 * no duplicate or clashing paths, and a total size within `maxBytes` (else TOO_LARGE).
 */
export function parseManifest(bytes: Uint8Array, maxBytes: number): SessionArchiveManifest {
  const record = decodeManifestJson(bytes);
  if (record.version !== ARCHIVE_FORMAT_VERSION) {
    throw invalid(`version must be ${ARCHIVE_FORMAT_VERSION}, got ${describeValue(record.version)}`);
  }
  const manifest = checkManifestRecord(record);
  assertDeclaredSize(
    manifest.files.reduce((sum, entry) => sum + entry.size, ARCHIVE_PREAMBLE_BYTES + bytes.byteLength),
    maxBytes,
  );
  return manifest;
}
