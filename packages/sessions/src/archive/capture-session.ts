import { dirname, resolve } from "node:path";
import { type ContentStore, fromSystemError, StowageError, sha256Hex, throwIfAborted } from "@stowage/core";
import { assertSessionAgent, DEFAULT_SESSION_AGENT, type SessionAgent } from "../agents/session-agent.js";
import { assertSessionId } from "../agents/session-id.js";
import { storeChunkedArchive } from "../chunks/chunked-archive.js";
import { collectClaudeJsonMcpServers } from "../claude/claude-json-mcp.js";
import { collectSessionEnvironment, collectSessionPlans } from "../claude/collect-environment.js";
import { PROJECT_MEMORY } from "../claude/session-configuration.js";
import { transcriptPlanSlugs } from "../claude/session-environment.js";
import { type ClaudeSessionLocationOptions, claudeSessionLocation } from "../claude/session-location.js";
import {
  assertSessionCodec,
  BROTLI_QUALITY_BY_AGENT,
  DEFAULT_SESSION_CODEC,
  type SessionCodec,
} from "../codec/codecs.js";
import { compressChunks } from "../codec/compress.js";
import { assertCodexCliOptions, type CodexCliOptions } from "../codex/codex-app-server.js";
import { CODEX_GOAL_ENTRY, type CodexGoalCapture, readCodexGoal } from "../codex/codex-goal.js";
import { codexRolloutLocation } from "../codex/rollout-location.js";
import { collectSubagentRollouts } from "../codex/subagent-rollouts.js";
import { CONFIGURATION_BY_AGENT } from "../configuration/agent-configuration.js";
import { collectConfiguration, type SecretLeftOut } from "../configuration/collect-configuration.js";
import {
  type ConfigurationLayout,
  PROJECT_CONFIG_ENTRY_PREFIX,
  PROJECT_DIR_ENTRY_PREFIX,
  USER_CONFIG_ENTRY_PREFIX,
} from "../configuration/configuration-layout.js";
import { childSessionIds, exportParentId } from "../opencode/child-sessions.js";
import { opencodeExportFileName } from "../opencode/export-file.js";
import { readOpencodeExport } from "../opencode/export-json.js";
import { assertOpencodeCliOptions, type OpencodeCliOptions, runOpencode } from "../opencode/opencode-cli.js";
import { opencodeConfigDir } from "../opencode/opencode-configuration.js";
import {
  collectSessionFiles,
  notRegularFileReason,
  readSessionFile,
  type SessionFile,
  type SkippedFile,
} from "./collect-files.js";
import {
  ARCHIVE_FORMAT_VERSION,
  DEFAULT_MAX_SESSION_BYTES,
  encodeArchiveHeader,
  MAX_ARCHIVE_ENTRIES,
  type SessionArchiveEntry,
  type SessionArchiveManifest,
} from "./manifest.js";
import { sessionAgentVersion } from "./session-agent-version.js";
import { assertPositiveInteger, type SessionArchive } from "./session-archive.js";

interface CommonCaptureOptions {
  sessionId: string;
  /** Default `brotli`. */
  codec?: SessionCodec;
  /**
   * Store the session as chunks in this content store (a principal's blob store): each file cut
   * at line ends into content-defined chunks (about 64 KiB) stored once however many captures
   * hold them, its image and document payloads stored apart once each. The blob returned is then
   * a chunked archive (its manifest alone), restored with `restoreSession(…, { blobs })` or
   * assembled back into the archive with `assembleSessionBlob`. Default: one self-contained archive.
   */
  blobs?: ContentStore;
  /** With `blobs`: take image and document payloads out of the text. Default true. */
  externalizePayloads?: boolean;
  /** Fail with TOO_LARGE when the session's files add up to more. Default 256 MiB. */
  maxBytes?: number;
  /**
   * Also capture the configuration a resumed run in a new container needs: the user's under
   * `~user/` and, with the working directory known, the project's under `~project/` (per agent:
   * Claude Code's `settings.json`, `CLAUDE.md`, `commands/`, `agents/`, `skills/`, plugins,
   * `.mcp.json`, `.claude/…`; Codex's `config.toml`, `AGENTS.md`, `prompts/`, `skills/`, `rules/`;
   * OpenCode's `opencode.json(c)`, `AGENTS.md`, agents, commands, modes, plugins, `.opencode/…`).
   * Secrets are left out and listed in `secretsLeftOut`. Default false.
   */
  withConfig?: boolean;
  signal?: AbortSignal;
}

/** Claude Code: the transcript, its companion directory and its legacy agent files. */
export interface ClaudeCaptureOptions extends CommonCaptureOptions, ClaudeSessionLocationOptions {
  agent?: "claude-code";
  /** Include `agent-*.jsonl` files beside the transcript that belong to this session. Default true. */
  includeLegacyAgents?: boolean;
  /**
   * Include the session's files in the config directory (archived under `~config/`):
   * `file-history/<id>/` (rewind checkpoints), `tasks/<id>/` (the task list), `session-env/<id>/`,
   * `todos/<id>-agent-*.json` and the plans its transcript names (`plans/<slug>.md`). Default true.
   */
  includeEnvironment?: boolean;
  /**
   * Also capture the project's auto-memory (`projects/<key>/memory/`, under `~project-dir/`):
   * the project's, shared by all its sessions, restored only where the project has none of its
   * files (`configuration.kept` otherwise). Default false.
   */
  withMemory?: boolean;
}

/** Codex: the rollout file, found by session id under `$CODEX_HOME/sessions`. */
export interface CodexCaptureOptions extends CommonCaptureOptions {
  agent: "codex";
  /** Codex's home. Default: `$CODEX_HOME`, else `~/.codex`. */
  codexHome?: string;
  /** With `withConfig`: the working directory, whose project configuration is captured too. */
  cwd?: string;
  /**
   * Include the rollouts of the session's subagents (`spawn_agent`: each its own thread and
   * rollout file, whose `session_meta` names this session). Default true.
   */
  includeSubagents?: boolean;
  /**
   * The Codex CLI, run as `codex app-server` (stdio only) with `codexHome` as its `CODEX_HOME`
   * to read the thread's goal (`thread/goal/get`), which Codex keeps only in its
   * `goals_1.sqlite`; a goal is archived as `~codex/goal.json`. Without it the goal is not read
   * (`codexGoal.read` false, with the reason). Default: none.
   */
  codex?: CodexCliOptions;
}

/** OpenCode: what `opencode export <sessionId>` prints, run with the CLI the caller gives. */
export interface OpencodeCaptureOptions extends CommonCaptureOptions {
  agent: "opencode";
  opencode: OpencodeCliOptions;
  /**
   * With `withConfig`: OpenCode's config directory. Default: `$XDG_CONFIG_HOME/opencode` (of
   * `opencode.env`, else of this process), else `$HOME/.config/opencode`. The project's
   * configuration is taken from `opencode.cwd`.
   */
  configDir?: string;
  /**
   * Also export the child sessions its `task` tool ran subagents in (each a session of its own,
   * whose `parentID` is this session or another child), as `<childId>.json`. Default true.
   */
  includeSubagents?: boolean;
}

/**
 * The exports of the child sessions `exported` hands work to, and theirs in turn, each checked
 * to be started from this session or one of its children (`info.parentID`), within `budget` bytes.
 */
async function exportChildSessions(
  options: OpencodeCaptureOptions,
  exported: Uint8Array,
  budget: number,
): Promise<SessionSource[]> {
  const { signal } = options;
  const family = new Set([options.sessionId]);
  const queue = childSessionIds(exported);
  const sources: SessionSource[] = [];
  let left = budget;
  while (queue.length > 0 && sources.length < MAX_ARCHIVE_ENTRIES) {
    const childId = queue.shift()!;
    if (family.has(childId)) continue;
    const bytes = await runOpencode(options.opencode, ["export", childId], {
      maxOutputBytes: Math.max(left, 1),
      ...(signal ? { signal } : {}),
    });
    const child = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    readOpencodeExport(child, childId);
    const parent = exportParentId(child);
    if (parent === undefined || !family.has(parent)) continue;
    family.add(childId);
    left -= child.byteLength;
    sources.push({ path: opencodeExportFileName(childId), bytes: child });
    queue.push(...childSessionIds(child));
  }
  return sources;
}

export type CaptureSessionOptions = ClaudeCaptureOptions | CodexCaptureOptions | OpencodeCaptureOptions;

export interface CapturedSession extends SessionArchive {
  agent: SessionAgent;
  /** Claude Code only: the project key the session was captured under. */
  projectKey?: string;
  manifest: SessionArchiveManifest;
  blobSizeBytes: number;
  /**
   * What this capture adds to storage: the blob, and with `blobs` the chunks and payloads the
   * content store did not hold before (a follow-up capture adds only what is new).
   */
  storedBytes: number;
  /** Files seen but left out (symlinks, unsafe names), with the reason. */
  skipped: SkippedFile[];
  /** With `withConfig`: the secrets removed from the configuration files captured. */
  secretsLeftOut?: SecretLeftOut[];
  /** Codex only: whether the thread's goal was read (`codex` given) and what it was. */
  codexGoal?: CodexGoalCapture;
}

/**
 * One file of the snapshot: read from disk (reached from `root` through `segments`, never through
 * a link), or already in memory (an OpenCode export).
 */
export type SessionSource = SessionFile | { path: string; bytes: Uint8Array };

/** What a capture found: the session's files, and those it left out. */
export interface CollectedSession {
  sessionId: string;
  projectKey?: string;
  sources: SessionSource[];
  skipped: SkippedFile[];
  secretsLeftOut?: SecretLeftOut[];
  codexGoal?: CodexGoalCapture;
  /** Files the main transcript (the first source, once read) names: Claude Code's plans. */
  namedBy?: (main: Uint8Array) => Promise<{ files: SessionFile[]; skipped: SkippedFile[] }>;
}

async function collect(options: CaptureSessionOptions, maxBytes: number): Promise<CollectedSession> {
  const { signal } = options;
  if (options.agent === "codex") {
    const location = await codexRolloutLocation({
      sessionId: options.sessionId,
      ...(options.codexHome === undefined ? {} : { codexHome: options.codexHome }),
      ...(signal ? { signal } : {}),
    });
    const collected: CollectedSession = {
      sessionId: location.sessionId,
      // Read from Codex's home down, one name at a time: a day folder swapped for a link since
      // it was found is refused, never read through.
      sources: [
        {
          path: location.relativePath,
          absolute: location.rolloutPath,
          root: location.codexHome,
          segments: ["sessions", ...location.relativePath.split("/")],
        },
        ...(options.includeSubagents === false ? [] : await collectSubagentRollouts(location, signal)),
      ],
      skipped: [],
    };
    collected.codexGoal = await addCodexGoal(collected, location.codexHome, options);
    if (options.withConfig === true) {
      await addConfiguration(collected, "codex", { user: location.codexHome, project: options.cwd }, options);
    }
    return collected;
  }
  if (options.agent === "opencode") {
    assertSessionId(options.sessionId);
    assertOpencodeCliOptions(options.opencode);
    const { sessionId } = options;
    // The CLI reads OpenCode's database (SQLite in WAL mode, or the JSON files of older
    // versions) the way OpenCode itself does: no live database file is ever copied.
    const bytes = await runOpencode(options.opencode, ["export", sessionId], {
      maxOutputBytes: maxBytes,
      ...(signal ? { signal } : {}),
    });
    const exported = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    readOpencodeExport(exported, sessionId);
    const sources: SessionSource[] = [{ path: opencodeExportFileName(sessionId), bytes: exported }];
    if (options.includeSubagents !== false) {
      sources.push(...(await exportChildSessions(options, exported, maxBytes - exported.byteLength)));
    }
    const collected: CollectedSession = { sessionId, sources, skipped: [] };
    if (options.withConfig === true) {
      const roots = {
        user: options.configDir ?? opencodeConfigDir(options.opencode.env),
        project: options.opencode.cwd,
      };
      await addConfiguration(collected, "opencode", roots, options);
    }
    return collected;
  }
  const location = await claudeSessionLocation(options);
  const { files, skipped } = await collectSessionFiles(location, {
    includeLegacyAgents: options.includeLegacyAgents ?? true,
    ...(signal ? { signal } : {}),
  });
  const collected: CollectedSession = {
    sessionId: location.sessionId,
    projectKey: location.projectKey,
    sources: files,
    skipped,
  };
  // The project directory is `<configDir>/projects/<key>` (checked when it was opened).
  const configDir = dirname(dirname(location.projectDir));
  if (options.includeEnvironment !== false) {
    const environment = await collectSessionEnvironment(configDir, location.sessionId);
    collected.sources.push(...environment.files);
    collected.skipped.push(...environment.skipped);
    collected.namedBy = (main) => collectSessionPlans(configDir, transcriptPlanSlugs(main));
  }
  if (options.withConfig === true) {
    await addConfiguration(collected, "claude-code", { user: configDir, project: options.cwd }, options);
    // The user's and the project's local MCP servers, from the install's state file.
    const servers = await collectClaudeJsonMcpServers(configDir, options.cwd, maxBytes, signal);
    if (servers.source) collected.sources.push(servers.source);
    collected.skipped.push(...servers.skipped);
    collected.secretsLeftOut!.push(...servers.secretsLeftOut);
  }
  if (options.withMemory === true) {
    const memory = await collectConfiguration(configDir, PROJECT_MEMORY, PROJECT_DIR_ENTRY_PREFIX, {
      limit: maxBytes,
      below: ["projects", location.projectKey],
      ...(signal ? { signal } : {}),
    });
    collected.sources.push(...memory.sources);
    collected.skipped.push(...memory.skipped);
  }
  return collected;
}

/**
 * The thread's goal, read through `codex app-server` when the CLI is given, added as
 * `~codex/goal.json` when there is one.
 */
async function addCodexGoal(
  collected: CollectedSession,
  codexHome: string,
  options: CodexCaptureOptions,
): Promise<CodexGoalCapture> {
  if (options.codex === undefined) {
    return {
      read: false,
      reason: "no Codex CLI given (codex: { bin }): the thread's goal, if any, is not captured",
    };
  }
  assertCodexCliOptions(options.codex);
  const goal = await readCodexGoal(options.codex, codexHome, collected.sessionId, options.signal);
  if (goal !== null) {
    collected.sources.push({ path: CODEX_GOAL_ENTRY, bytes: new TextEncoder().encode(JSON.stringify(goal)) });
  }
  return { read: true, goal };
}

/**
 * `agent`'s user configuration, and the project's when the working directory is known, secrets
 * left out, read into memory within `maxBytes`.
 */
async function addConfiguration(
  collected: CollectedSession,
  agent: SessionAgent,
  roots: { user: string; project: string | undefined },
  options: { maxBytes?: number; signal?: AbortSignal },
): Promise<void> {
  const { signal } = options;
  const layouts = CONFIGURATION_BY_AGENT[agent];
  const places: [string | undefined, ConfigurationLayout, string][] = [
    [roots.user, layouts.user, USER_CONFIG_ENTRY_PREFIX],
    [
      roots.project === undefined ? undefined : resolve(roots.project),
      layouts.project,
      PROJECT_CONFIG_ENTRY_PREFIX,
    ],
  ];
  collected.secretsLeftOut = [];
  let limit = options.maxBytes ?? DEFAULT_MAX_SESSION_BYTES;
  for (const [root, layout, prefix] of places) {
    if (root === undefined) {
      collected.skipped.push({
        path: prefix,
        reason: "the project's configuration is captured only when the working directory (cwd) is given",
      });
      continue;
    }
    const found = await collectConfiguration(root, layout, prefix, { limit, ...(signal ? { signal } : {}) });
    limit -= found.bytes;
    collected.sources.push(...found.sources);
    collected.skipped.push(...found.skipped);
    collected.secretsLeftOut.push(...found.secretsLeftOut);
  }
}

/** The main transcript (or rollout) gone or no longer a regular file once it is read. */
function mainNotReadable(absolute: string, refused: "symlink" | "other" | "missing"): StowageError {
  if (refused === "missing")
    return new StowageError("NOT_FOUND", `session transcript not found: ${absolute}`);
  return new StowageError(
    "INVALID_INPUT",
    `session transcript ${absolute} is not a regular file (symlinks are not followed)`,
  );
}

/**
 * Reads what `collect` found (files once into memory, bounded by `maxBytes`) and compresses it
 * into one archive. Everything a capture does after finding the session; the bench times it
 * apart from the agent's CLI.
 */
export async function archiveSession(
  agent: SessionAgent,
  collected: CollectedSession,
  options: {
    codec: SessionCodec;
    maxBytes: number;
    blobs?: ContentStore;
    externalizePayloads?: boolean;
    signal?: AbortSignal;
  },
): Promise<CapturedSession> {
  const { codec, maxBytes, signal } = options;
  const { sessionId, projectKey, skipped, secretsLeftOut, codexGoal } = collected;
  // Grows by what the main transcript names, once it is read.
  const sources = [...collected.sources];
  const tooLarge = (bytes: number) =>
    new StowageError(
      "TOO_LARGE",
      `session files add up to ${bytes} bytes, over the limit of ${maxBytes} bytes (maxBytes)`,
      { details: { limit: maxBytes, size: bytes } },
    );
  const entries: SessionArchiveEntry[] = [];
  const contents: Uint8Array[] = [];
  let total = 0;
  for (const [index, source] of sources.entries()) {
    let bytes: Uint8Array;
    let mtimeMs: number;
    if ("bytes" in source) {
      bytes = source.bytes;
      mtimeMs = Date.now();
    } else {
      // Read as the file is now, not as it was listed: a link or FIFO swapped in since is refused.
      const read = await readSessionFile(source, maxBytes - total, signal);
      if ("refused" in read) {
        if (index === 0) throw mainNotReadable(source.absolute, read.refused);
        // A companion file removed between listing and reading is simply not part of the snapshot.
        skipped.push({
          path: source.path,
          reason:
            read.refused === "missing"
              ? "removed while capturing"
              : notRegularFileReason(source.path, read.refused === "symlink"),
        });
        continue;
      }
      if ("oversize" in read) throw tooLarge(total + read.oversize);
      bytes = read.bytes;
      mtimeMs = Math.round(read.mtimeMs);
    }
    total += bytes.byteLength;
    if (total > maxBytes) throw tooLarge(total);
    if (index === 0 && collected.namedBy) {
      const named = await collected.namedBy(bytes);
      sources.push(...named.files);
      skipped.push(...named.skipped);
    }
    entries.push({ path: source.path, size: bytes.byteLength, sha256: sha256Hex(bytes), mtimeMs });
    contents.push(bytes);
  }
  if (entries.length > MAX_ARCHIVE_ENTRIES) {
    throw new StowageError("TOO_LARGE", `session has more than ${MAX_ARCHIVE_ENTRIES} files`, {
      details: { limit: MAX_ARCHIVE_ENTRIES },
    });
  }
  // The main transcript (rollout, export) is the first file: a capture without it fails above.
  const agentVersion = contents[0] ? sessionAgentVersion(agent, contents[0]) : undefined;
  const manifest: SessionArchiveManifest = {
    format: "stowage-session",
    version: ARCHIVE_FORMAT_VERSION,
    agent,
    ...(agentVersion === undefined ? {} : { agentVersion }),
    sessionId,
    ...(projectKey === undefined ? {} : { projectKey }),
    capturedAt: new Date().toISOString(),
    files: entries,
  };
  const header = encodeArchiveHeader(manifest);
  const rawSizeBytes = header.byteLength + total;
  if (rawSizeBytes > maxBytes) throw tooLarge(rawSizeBytes);
  const captured = {
    manifest,
    skipped,
    ...(secretsLeftOut ? { secretsLeftOut } : {}),
    ...(codexGoal ? { codexGoal } : {}),
  };
  const chunked = options.blobs
    ? await storeChunkedArchive(
        manifest,
        contents,
        { form: "archive", codec },
        {
          blobs: options.blobs,
          ...(options.externalizePayloads === undefined
            ? {}
            : { externalizePayloads: options.externalizePayloads }),
          ...(signal ? { signal } : {}),
        },
      )
    : null;
  if (chunked) {
    const { chunks: _chunks, payloads: _payloads, ...archive } = chunked;
    return { ...archive, ...captured };
  }
  const blob = await compressChunks(codec, [header, ...contents], {
    sizeHint: rawSizeBytes,
    brotliQuality: BROTLI_QUALITY_BY_AGENT[agent],
    ...(signal ? { signal } : {}),
  });
  return {
    agent,
    sessionId,
    ...(projectKey === undefined ? {} : { projectKey }),
    codec,
    blob,
    blobSizeBytes: blob.byteLength,
    storedBytes: blob.byteLength,
    rawSizeBytes,
    ...captured,
  };
}

/**
 * Captures an agent's session into one compressed archive, each file with its size and sha256
 * in the manifest, which also records the agent and the agent CLI's version the session itself
 * records (`agentVersion`, the newest when several; absent when none):
 * - Claude Code (default): the main `<sessionId>.jsonl`, its companion directory (`subagents/`,
 *   `tool-results/`) and the legacy `agent-*.jsonl` files that belong to it;
 * - Codex: the rollout `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<sessionId>.jsonl`;
 * - OpenCode: the session as `opencode export <sessionId>` prints it.
 * The files are read once into memory (bounded by `maxBytes`), so the archive is a consistent
 * snapshot of what was read. With `blobs`, the files go to that content store as chunks and
 * payloads, and the archive returned is their manifest (see `blobs`).
 */
export async function captureSession(options: CaptureSessionOptions): Promise<CapturedSession> {
  const agent = options?.agent ?? DEFAULT_SESSION_AGENT;
  assertSessionAgent(agent);
  const codec = options.codec ?? DEFAULT_SESSION_CODEC;
  assertSessionCodec(codec);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SESSION_BYTES;
  assertPositiveInteger(maxBytes, "maxBytes");
  const { signal } = options;
  const context = `capture ${agent} session ${String(options.sessionId)}`;
  try {
    throwIfAborted(signal, context);
    const collected = await collect(options, maxBytes);
    return await archiveSession(agent, collected, {
      codec,
      maxBytes,
      ...(options.blobs ? { blobs: options.blobs } : {}),
      ...(options.externalizePayloads === undefined
        ? {}
        : { externalizePayloads: options.externalizePayloads }),
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    throw fromSystemError(err, context);
  }
}
