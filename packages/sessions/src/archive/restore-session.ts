import { open } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import {
  type ContentStore,
  concatBytes,
  describeValue,
  fromSystemError,
  StowageError,
  sha256Hex,
  throwIfAborted,
} from "@stowage/core";
import {
  fsyncDirectory,
  type OpenedDirectory,
  openDirectoryBeneath,
  openFileBeneath,
} from "@stowage/core/fs";
import { agentVersionFromCliOutput } from "../agents/agent-version.js";
import type { SessionAgent } from "../agents/session-agent.js";
import { type AgentVersionCheck, checkAgentVersion } from "../agents/version-compatibility.js";
import { assertProjectKey, claudeProjectKey } from "../claude/project-key.js";
import { CONFIG_DIR_ENTRY_PREFIX, isPlanFileOf, transcriptPlanSlugs } from "../claude/session-environment.js";
import { defaultClaudeConfigDir } from "../claude/session-location.js";
import { assertCodexCliOptions, type CodexCliOptions } from "../codex/codex-app-server.js";
import {
  CODEX_GOAL_ENTRY,
  type CodexGoal,
  type CodexGoalRestore,
  parseCodexGoalEntry,
  setCodexGoal,
} from "../codex/codex-goal.js";
import { resolveCodexHome } from "../codex/codex-home.js";
import { rolloutOwner } from "../codex/subagent-rollouts.js";
import { isConfigurationEntry } from "../configuration/agent-configuration.js";
import { type RestoredConfiguration, restoreConfiguration } from "../configuration/restore-configuration.js";
import { exportParentId } from "../opencode/child-sessions.js";
import { opencodeExportSessionId } from "../opencode/export-file.js";
import { importOpencodeSession } from "../opencode/import-session.js";
import { assertOpencodeCliOptions, type OpencodeCliOptions } from "../opencode/opencode-cli.js";
import { opencodeConfigDir } from "../opencode/opencode-configuration.js";
import { transcriptOwner } from "./collect-files.js";
import { LEGACY_AGENT_FILE_PATTERN } from "./entry-path.js";
import {
  DEFAULT_MAX_SESSION_BYTES,
  type SessionArchiveEntry,
  type SessionArchiveManifest,
} from "./manifest.js";
import { removeCreatedDirectories } from "./remove-created-directories.js";
import { assertPositiveInteger, assertSessionArchive, type SessionArchive } from "./session-archive.js";
import {
  finishSessionArchive,
  type OpenedSessionArchive,
  openSessionArchive,
  readSessionEntry,
  type SessionBlobFormat,
} from "./session-archive-reader.js";
import { withSessionLock } from "./session-lock.js";
import { createStagingDirectory, type StagingDirectory } from "./staging-directory.js";
import { removeStaleStaging } from "./stale-staging.js";
import { swapIntoPlace } from "./swap-into-place.js";

export interface RestoreSessionOptions {
  /**
   * The agent the session must be of (INVALID_INPUT, reason `AGENT_MISMATCH`, otherwise).
   * Default: the agent the archive records; a blob in the compatibility format is Claude Code's.
   */
  agent?: SessionAgent;
  /**
   * Claude Code's config directory. Default: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. OpenCode:
   * its config directory, where the user's configuration goes (default: as `captureSession`'s).
   */
  configDir?: string;
  /**
   * Claude Code: restore under the project key of this working directory. Every agent: where
   * the project's configuration goes (OpenCode: default `opencode.cwd`).
   */
  cwd?: string;
  /** Claude Code: restore under this project key. Default (no `cwd` either): the key recorded at capture. */
  projectKey?: string;
  /** Codex's home. Default: `$CODEX_HOME`, else `~/.codex`. */
  codexHome?: string;
  /**
   * Codex: the CLI whose `codex app-server` (stdio only, `CODEX_HOME` the restore's) sets the
   * archived goal (`~codex/goal.json`) again on the restored thread (`thread/goal/set`), once
   * the rollout is in place. Without it the goal is not set (`codexGoal.set` false, with the
   * reason). Default: none.
   */
  codex?: CodexCliOptions;
  /** OpenCode: the CLI that imports the session (required for an OpenCode session). */
  opencode?: OpencodeCliOptions;
  /** Fail with TOO_LARGE when the archive decompresses to more. Default 256 MiB. */
  maxBytes?: number;
  /**
   * The installed agent CLI's version (what `<cli> --version` prints, or just its version),
   * compared with the one the archive records before anything is written: refused with CONFLICT
   * (reason `AGENT_VERSION_MISMATCH`, details `{ agent, captured, installed }`) where the agent's
   * table says their session formats differ, restored with `agentVersionCheck.warning` where they
   * only differ. Either one unknown (not given, an archive that records none, text that is not a
   * version): no check.
   */
  agentVersion?: string;
  /**
   * Where a chunked archive's chunks and payloads are (the blobs they were stored in): its files
   * are rebuilt from there as they are written, each checked against its sha256. Without it a
   * chunked archive is INVALID_INPUT (`CHUNKED_BLOB`).
   */
  blobs?: ContentStore;
  /**
   * Replace what the archive holds when it is already there (else CONFLICT): Claude Code's and
   * Codex's files one by one (files of the existing copy that the archive lacks are kept), or
   * the session in OpenCode's database as a whole. Default true.
   */
  overwrite?: boolean;
  /** fsync restored files and directories before returning. Default true. */
  fsync?: boolean;
  signal?: AbortSignal;
}

export interface RestoredSession {
  agent: SessionAgent;
  sessionId: string;
  /** What the blob held: a Stowage archive, or one JSONL transcript (the compatibility format). */
  format: SessionBlobFormat;
  /** The agent CLI's version the archive records (see `SessionArchiveManifest.agentVersion`). */
  agentVersion?: string;
  /** How it compared with the installed CLI's (`agentVersion` option); `differs` carries the warning. */
  agentVersionCheck: AgentVersionCheck;
  /**
   * Where the files went: Claude Code's project directory, Codex's day folder; absent for
   * OpenCode, whose CLI imported the session into its database.
   */
  directory?: string;
  /** Claude Code's main transcript, or Codex's rollout. */
  transcriptPath?: string;
  /** Claude Code only. */
  projectKey?: string;
  /** Claude Code only: the same as `directory`. */
  projectDir?: string;
  files: SessionArchiveEntry[];
  /**
   * The files (paths as in `files`) that replaced a file already there. Files of an existing copy
   * that the archive does not hold are kept: a restore deletes nothing it did not write.
   */
  replaced: string[];
  /**
   * When the archive holds configuration (captured with `withConfig`): what was written, what
   * was there already, and what was not written and why. A configuration file already there is
   * never replaced. Written once the session itself is in place: a file that fails to be written
   * then is in `skipped` with the error, and the session stays restored.
   */
  configuration?: RestoredConfiguration;
  /**
   * Codex, when the archive holds the thread's goal: whether it was set again (`codex` given),
   * or why not. Set after the rollout is in place: a failure leaves the session restored.
   */
  codexGoal?: CodexGoalRestore;
}

// Restored transcripts hold prompts, code and tool output: private to the owner.
const FILE_MODE = 0o600;

/** Where an agent's files go: a directory opened beneath a root, creating what is missing. */
interface RestoreTarget {
  root: string;
  segments: string[];
  /** An entry's path below the opened directory. */
  placeOf: (entry: SessionArchiveEntry) => string;
  /** The directory as messages and the result name it. */
  lexicalDir: string;
  transcriptPath: string;
  projectKey?: string;
}

async function restoreTarget(
  opened: OpenedSessionArchive,
  options: RestoreSessionOptions,
): Promise<RestoreTarget> {
  const { manifest } = opened;
  if (manifest.agent === "codex") {
    const codexHome = resolveCodexHome(options.codexHome);
    const [entry] = manifest.files;
    const [year, month, day, name] = entry!.path.split("/") as [string, string, string, string];
    const lexicalDir = join(codexHome, "sessions", year, month, day);
    // With its subagents' rollouts, possibly in later day folders: restored from `sessions/` down.
    const rollouts = manifest.files.filter(
      (file) => !isConfigurationEntry(file.path) && file.path !== CODEX_GOAL_ENTRY,
    );
    const withSubagents = rollouts.length > 1;
    return {
      root: codexHome,
      segments: withSubagents ? ["sessions"] : ["sessions", year, month, day],
      placeOf: withSubagents ? (entry) => entry.path : () => name,
      lexicalDir,
      transcriptPath: join(lexicalDir, name),
    };
  }
  if (options.cwd !== undefined && options.projectKey !== undefined) {
    throw new StowageError("INVALID_INPUT", "give at most one of cwd or projectKey to restore a session");
  }
  let projectKey: string;
  if (options.cwd !== undefined) {
    projectKey = await claudeProjectKey(options.cwd, options.signal ? { signal: options.signal } : {});
  } else {
    const key = options.projectKey ?? manifest.projectKey;
    if (key === undefined) {
      throw new StowageError(
        "INVALID_INPUT",
        "a session blob in the compatibility format records no project: give cwd or projectKey to restore it",
        { reason: "PROJECT_UNKNOWN" },
      );
    }
    assertProjectKey(key);
    projectKey = key;
  }
  if (
    options.configDir !== undefined &&
    (typeof options.configDir !== "string" || options.configDir === "")
  ) {
    throw new StowageError("INVALID_INPUT", "configDir must be a non-empty path");
  }
  const configDir = resolve(options.configDir ?? defaultClaudeConfigDir());
  const lexicalDir = join(configDir, "projects", projectKey);
  // An archive with the session's config-directory files is restored from the config directory
  // down: the project's files go to `projects/<key>/`, those under `~config/` to their place there.
  const inConfigDir = manifest.files.some((entry) => entry.path.startsWith(CONFIG_DIR_ENTRY_PREFIX));
  return {
    root: configDir,
    segments: inConfigDir ? [] : ["projects", projectKey],
    placeOf: inConfigDir
      ? (entry) =>
          entry.path.startsWith(CONFIG_DIR_ENTRY_PREFIX)
            ? entry.path.slice(CONFIG_DIR_ENTRY_PREFIX.length)
            : `projects/${projectKey}/${entry.path}`
      : (entry) => entry.path,
    lexicalDir,
    transcriptPath: join(lexicalDir, `${manifest.sessionId}.jsonl`),
    projectKey,
  };
}

/**
 * Whether a file already where an entry goes is the session's own, so that it may be replaced.
 * A plan: see `assertOwnPlanFile`. A legacy `agent-<id>.jsonl` already in the project directory
 * is replaced only when its own lines name the session being restored (as the archive's copy must): it may be another
 * session's subagent transcript, which a restore never touches (INVALID_INPUT, `FOREIGN_ENTRY`).
 * One that names no session, a link or anything but a regular file is refused the same way.
 */
async function assertOwnFile(
  manifest: SessionArchiveManifest,
  path: string,
  existing: string,
  configDir: { directory: OpenedDirectory; projectKey: string | undefined },
): Promise<void> {
  if (manifest.agent === "codex" && path !== manifest.files[0]!.path) {
    // A subagent's rollout already there must name this session in its first line.
    const owner = await rolloutOwner(dirname(existing), [basename(existing)]);
    if (owner === manifest.sessionId) return;
    throw new StowageError(
      "INVALID_INPUT",
      `${describeValue(path)} in Codex's sessions ${owner === undefined ? "names no session" : `belongs to session ${owner}`}, not ${manifest.sessionId}; a restore never replaces another session's file`,
      { reason: "FOREIGN_ENTRY", details: { path } },
    );
  }
  if (manifest.agent !== "claude-code") return;
  if (path.startsWith(`${CONFIG_DIR_ENTRY_PREFIX}plans/`)) {
    await assertOwnPlanFile(manifest, path, existing, configDir);
    return;
  }
  if (!LEGACY_AGENT_FILE_PATTERN.test(path)) return;
  // `existing` is in a directory held open (`/proc/self/fd/<fd>/<name>` on Linux).
  const owner = await transcriptOwner(dirname(existing), basename(existing));
  if (owner === manifest.sessionId) return;
  throw new StowageError(
    "INVALID_INPUT",
    `${describeValue(path)} in the project directory ${owner === undefined ? "names no session" : `belongs to session ${owner}`}, not ${manifest.sessionId}; a restore never replaces another session's file`,
    { reason: "FOREIGN_ENTRY", details: { path } },
  );
}

/**
 * A plan names no session: one already in `plans/` is replaced only when it holds the archive's
 * bytes already, or when the session's transcript in place names its slug (it is this session's
 * plan); otherwise it may be another session's (INVALID_INPUT, `FOREIGN_ENTRY`).
 */
async function assertOwnPlanFile(
  manifest: SessionArchiveManifest,
  path: string,
  existing: string,
  { directory, projectKey }: { directory: OpenedDirectory; projectKey: string | undefined },
): Promise<void> {
  const entry = manifest.files.find((file) => file.path === path)!;
  // `existing` is in the plans directory held open (`/proc/self/fd/<fd>/<name>` on Linux).
  const plan = await readFileOrUndefined(dirname(existing), [basename(existing)]);
  if (plan !== undefined && sha256Hex(plan) === entry.sha256) return;
  const transcript =
    projectKey === undefined
      ? undefined
      : await readFileOrUndefined(directory, ["projects", projectKey, `${manifest.sessionId}.jsonl`]);
  const name = basename(path);
  if (transcript && transcriptPlanSlugs(transcript).some((slug) => isPlanFileOf(name, slug))) return;
  throw new StowageError(
    "INVALID_INPUT",
    `${describeValue(path)} is already in the config directory and session ${manifest.sessionId}'s transcript there does not name it; a restore never replaces another session's plan`,
    { reason: "FOREIGN_ENTRY", details: { path } },
  );
}

/** A regular file's bytes, opened beneath `directory` without following a link; undefined otherwise. */
async function readFileOrUndefined(
  directory: string | OpenedDirectory,
  segments: string[],
): Promise<Uint8Array | undefined> {
  const opened = await openFileBeneath(directory, segments).catch(() => null);
  if (!opened) return undefined;
  try {
    return new Uint8Array(await opened.handle.readFile());
  } finally {
    await opened.handle.close();
  }
}

/** fsyncs the target directory and every directory of `paths` below it, each opened beneath it. */
async function fsyncTree(target: OpenedDirectory, paths: readonly string[]): Promise<void> {
  const directories = new Set<string>([""]);
  for (const path of paths) {
    const segments = path.split("/");
    for (let i = 1; i < segments.length; i++) directories.add(segments.slice(0, i).join("/"));
  }
  for (const directory of directories) {
    const opened = directory === "" ? target : openDirectoryBeneath(target, directory.split("/"));
    if (!opened) continue;
    try {
      await fsyncDirectory(opened.path);
    } finally {
      if (opened !== target) opened.close();
    }
  }
}

async function restoreFiles(
  opened: OpenedSessionArchive,
  options: RestoreSessionOptions,
  fsync: boolean,
): Promise<
  Omit<RestoredSession, "agent" | "sessionId" | "format" | "files" | "agentVersion" | "agentVersionCheck">
> {
  const { manifest } = opened;
  const { signal } = options;
  const target = await restoreTarget(opened, options);
  const created: string[] = [];
  let directory: OpenedDirectory | undefined;
  let staging: StagingDirectory | undefined;
  let succeeded = false;
  try {
    // Every later step goes through the directory opened here, never through its path again: a
    // link (or a file) planted at any segment cannot redirect the restore. The root itself may
    // be a link: the caller chose it.
    const targetDir = openDirectoryBeneath(target.root, target.segments, {
      create: true,
      refuseNonDirectories: true,
      onCreate: (made) => created.push(made),
    })!;
    directory = targetDir;
    await removeStaleStaging(targetDir);
    // Held open, and flat: the agent owning the target cannot redirect a staged write or removal.
    staging = await createStagingDirectory(targetDir);
    const places: string[] = [];
    const entryAt = new Map<string, string>();
    const configuration: { entry: SessionArchiveEntry; bytes: Uint8Array }[] = [];
    for (const entry of manifest.files) {
      if (isConfigurationEntry(entry.path) || entry.path === CODEX_GOAL_ENTRY) {
        // The user's, written after the session's files and never over a file there: kept in memory.
        const parts: Uint8Array[] = [];
        await readSessionEntry(
          opened,
          entry,
          (part) => {
            parts.push(part.slice());
          },
          signal ? { signal } : {},
        );
        configuration.push({ entry, bytes: concatBytes(parts, entry.size) });
        continue;
      }
      const index = places.length;
      places.push(target.placeOf(entry));
      entryAt.set(places[index]!, entry.path);
      const handle = await open(`${staging.staged.path}/${index}`, "wx", FILE_MODE);
      try {
        await readSessionEntry(
          opened,
          entry,
          async (part) => {
            for (let offset = 0; offset < part.byteLength; ) {
              offset += (await handle.write(part, offset, part.byteLength - offset)).bytesWritten;
            }
          },
          signal ? { signal } : {},
        );
        if (fsync) await handle.sync();
        // On the descriptor, never the path. Seconds as a number, not a Date: a Date would round
        // the float and lose the millisecond.
        await handle.utimes(entry.mtimeMs / 1000, entry.mtimeMs / 1000);
      } finally {
        await handle.close();
      }
    }
    await finishSessionArchive(opened);
    // Checked before anything is placed: a goal that is not JSON, too large or another thread's is refused.
    const goalAt = configuration.findIndex(({ entry }) => entry.path === CODEX_GOAL_ENTRY);
    const goal =
      goalAt < 0 ? undefined : parseCodexGoalEntry(configuration[goalAt]!.bytes, manifest.sessionId);
    if (goalAt >= 0) configuration.splice(goalAt, 1);
    throwIfAborted(signal, "restore session");
    const { staged, aside } = staging;
    const replaced = await withSessionLock(
      targetDir.path,
      manifest.sessionId,
      () =>
        swapIntoPlace({
          target: targetDir,
          stagedDir: staged.path,
          asideDir: aside.path,
          paths: places,
          overwrite: options.overwrite ?? true,
          checkReplaceable: (place, existing) =>
            assertOwnFile(manifest, entryAt.get(place) ?? place, existing, {
              directory: targetDir,
              projectKey: target.projectKey,
            }),
          onCreate: (made) => created.push(made),
        }),
      signal,
    );
    if (fsync) await fsyncTree(targetDir, places);
    succeeded = true;
    const restoredConfiguration =
      configuration.length === 0
        ? undefined
        : await restoreConfiguration(
            configuration,
            {
              configDir: target.root,
              cwd: options.cwd === undefined ? undefined : resolve(options.cwd),
              projectKey: target.projectKey,
            },
            fsync,
          );
    return {
      directory: target.lexicalDir,
      transcriptPath: target.transcriptPath,
      ...(target.projectKey === undefined
        ? {}
        : { projectKey: target.projectKey, projectDir: target.lexicalDir }),
      // Claude Code's as archive paths (a config-directory restore places them below `projects/<key>/`);
      // Codex's as placed: the rollout's name, or its path below `sessions/` with its subagents'.
      replaced: manifest.agent === "codex" ? replaced : replaced.map((place) => entryAt.get(place) ?? place),
      ...(restoredConfiguration ? { configuration: restoredConfiguration } : {}),
      ...(goal ? { codexGoal: await restoreCodexGoal(goal, target.root, options) } : {}),
    };
  } finally {
    if (staging) await staging.remove().catch(() => {});
    directory?.close();
    if (!succeeded) await removeCreatedDirectories(created, resolve(target.root));
  }
}

/**
 * Sets the archived goal on the restored thread through `codex app-server` (Codex's SQLite is
 * never written here); without the CLI, or when it fails, says why and leaves the session restored.
 */
async function restoreCodexGoal(
  goal: CodexGoal,
  codexHome: string,
  options: RestoreSessionOptions,
): Promise<CodexGoalRestore> {
  if (options.codex === undefined) {
    return { set: false, goal, reason: "no Codex CLI given (codex: { bin }): the thread's goal is not set" };
  }
  try {
    return { set: true, goal: await setCodexGoal(options.codex, codexHome, goal, options.signal) };
  } catch (err) {
    return { set: false, goal, reason: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * OpenCode keeps sessions in its database: each export is checked, then `opencode import`ed, the
 * session's own first, then its child sessions', each of which must have been started from it or
 * from another child the archive holds (`info.parentID`; else INVALID_INPUT, `FOREIGN_ENTRY`),
 * checked before anything is imported.
 */
async function importOpencode(
  opened: OpenedSessionArchive,
  options: RestoreSessionOptions,
): Promise<{ replaced: string[]; configuration?: RestoredConfiguration }> {
  const cli = options.opencode;
  assertOpencodeCliOptions(cli);
  const exports: { entry: SessionArchiveEntry; sessionId: string; bytes: Uint8Array }[] = [];
  const configuration: { entry: SessionArchiveEntry; bytes: Uint8Array }[] = [];
  for (const entry of opened.manifest.files) {
    const parts: Uint8Array[] = [];
    await readSessionEntry(opened, entry, (part) => {
      parts.push(part.slice());
    });
    if (isConfigurationEntry(entry.path)) {
      configuration.push({ entry, bytes: concatBytes(parts, entry.size) });
      continue;
    }
    exports.push({
      entry,
      sessionId: opencodeExportSessionId(entry.path),
      bytes: concatBytes(parts, entry.size),
    });
  }
  await finishSessionArchive(opened);
  const family = new Set(exports.map((exported) => exported.sessionId));
  for (const child of exports.slice(1)) {
    const parent = exportParentId(child.bytes);
    if (parent === undefined || parent === child.sessionId || !family.has(parent)) {
      throw new StowageError(
        "INVALID_INPUT",
        `${describeValue(child.entry.path)} is not a child session of ${opened.manifest.sessionId} (its parentID is ${describeValue(parent)}); a restore never imports another session`,
        { reason: "FOREIGN_ENTRY", details: { path: child.entry.path } },
      );
    }
  }
  const replaced: string[] = [];
  for (const { entry, sessionId, bytes } of exports) {
    const replacedOne = await importOpencodeSession({
      cli,
      sessionId,
      exported: bytes,
      overwrite: options.overwrite ?? true,
      entryPath: entry.path,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (replacedOne) replaced.push(entry.path);
  }
  if (configuration.length === 0) return { replaced };
  const cwd = options.cwd ?? cli.cwd;
  const roots = {
    configDir: resolve(options.configDir ?? opencodeConfigDir(cli.env)),
    cwd: cwd === undefined ? undefined : resolve(cwd),
  };
  return { replaced, configuration: await restoreConfiguration(configuration, roots, options.fsync ?? true) };
}

/**
 * Restores a captured session where its agent looks for it: Claude Code's project directory,
 * Codex's `sessions/YYYY/MM/DD/`, or OpenCode's database (through `opencode import`). Every entry
 * path is checked (no `..`, absolute path, backslash, NUL, nor another session's file) before
 * anything is written; decompression is streamed and counted, so a bomb fails with TOO_LARGE
 * early; every file's sha256 is verified. Files are written into a private temp directory
 * inside the target directory and renamed into place, one by one, only once all are verified;
 * a file already there is replaced only if it is the session's own (a legacy agent file of
 * another session is INVALID_INPUT, `FOREIGN_ENTRY`), and files the archive does not hold are
 * left as they are. A failed restore leaves the directory as it was, and removes only the
 * directories it created that are still empty. No symbolic link below the root is followed
 * (FORBIDDEN, `SYMLINK_REFUSED`). OpenCode: see `importOpencodeSession`. With `agentVersion`
 * (the installed CLI's), the version the archive records is compared first: CONFLICT
 * (`AGENT_VERSION_MISMATCH`) where the formats are known to differ, a warning otherwise.
 */
export async function restoreSession(
  archive: SessionArchive,
  options: RestoreSessionOptions = {},
): Promise<RestoredSession> {
  assertSessionArchive(archive, Number.MAX_SAFE_INTEGER);
  if (options.agentVersion !== undefined && typeof options.agentVersion !== "string") {
    throw new StowageError(
      "INVALID_INPUT",
      `agentVersion must be a string (the installed CLI's version), got ${describeValue(options.agentVersion)}`,
    );
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SESSION_BYTES;
  assertPositiveInteger(maxBytes, "maxBytes");
  if (options.codex !== undefined) assertCodexCliOptions(options.codex);
  const { signal } = options;
  const fsync = options.fsync ?? true;
  const context = `restore session ${archive.sessionId}`;
  let opened: OpenedSessionArchive | undefined;
  try {
    opened = await openSessionArchive(archive, {
      maxBytes,
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(options.blobs ? { blobs: options.blobs } : {}),
      ...(signal ? { signal } : {}),
    });
    const { manifest } = opened;
    // Before a byte is written: a refused version leaves the agent's files as they were.
    const agentVersionCheck = checkAgentVersion(
      manifest.agent,
      manifest.agentVersion,
      agentVersionFromCliOutput(options.agentVersion)?.text,
    );
    const common = {
      agent: manifest.agent,
      sessionId: manifest.sessionId,
      format: opened.chunked ? ("chunked" as const) : opened.format,
      ...(manifest.agentVersion === undefined ? {} : { agentVersion: manifest.agentVersion }),
      agentVersionCheck,
    };
    if (manifest.agent === "opencode") {
      const imported = await importOpencode(opened, options);
      return { ...common, files: manifest.files, ...imported };
    }
    const placed = await restoreFiles(opened, options, fsync);
    // The compatibility format's single entry learns its real size once written.
    return { ...common, ...placed, files: manifest.files };
  } catch (err) {
    throw fromSystemError(err, context);
  } finally {
    await opened?.reader.close().catch(() => {});
  }
}
