import type { Dirent } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  concatBytes,
  errnoOf,
  isSessionId,
  pathSegmentProblem,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import {
  type OpenedDirectory,
  type OpenedFile,
  openDirectoryBeneath,
  openFileBeneath,
} from "@stowage/core/fs";
import type { ClaudeSessionLocation } from "../claude/session-location.js";
import { LEGACY_AGENT_FILE_PATTERN } from "./entry-path.js";
import { MAX_ARCHIVE_ENTRIES } from "./manifest.js";

/** Bytes read from the start of a legacy `agent-*.jsonl` to find which session it belongs to. */
export const LEGACY_OWNER_PROBE_BYTES = 64 * 1024;

/** Bytes read at a time once a file has grown past the size it had when it was opened. */
const READ_CHUNK_BYTES = 1024 * 1024;

export interface SessionFile {
  /** Its path in the archive, `/`-separated: relative to the project directory (Codex: its sessions). */
  path: string;
  /** For messages; never opened. */
  absolute: string;
  /**
   * Where the walk to the file starts: the directory the caller gave (Claude Code's config
   * directory, Codex's home), where a link is followed; the caller chose it.
   */
  root: string;
  /** The names from `root` down to the file, each opened beneath the one above, never through a link. */
  segments: readonly string[];
}

export interface SkippedFile {
  path: string;
  /** Why it was left out (a symlink, an unsafe name, …). */
  reason: string;
}

const isMissing = (err: unknown) => errnoOf(err) === "ENOENT" || errnoOf(err) === "ENOTDIR";

/**
 * Why a file that is not a regular one is left out of a capture; the same whether it was so when
 * the session was listed or became so before it was read.
 */
export function notRegularFileReason(path: string, symlink: boolean): string {
  if (LEGACY_AGENT_FILE_PATTERN.test(path)) return "legacy agent transcript is not a regular file";
  return symlink ? "symlink (not followed)" : "not a regular file";
}

async function readdirOrEmpty(directory: string): Promise<Dirent[]> {
  try {
    return await readdir(directory, { withFileTypes: true });
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
}

const byName = (a: Dirent, b: Dirent) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The session a legacy `agent-*.jsonl` belongs to: the top-level `sessionId` of its first line
 * (Claude Code writes it on every line). `head` is the file's start, the whole file when shorter
 * than {@link LEGACY_OWNER_PROBE_BYTES}. A `sessionId` nested deeper in the line is another
 * session's (a tool result quoting it), so it never counts; a first line that does not end within
 * the probe, is not a JSON object or names no valid session id gives undefined (no known owner).
 */
export function legacyAgentOwner(head: Uint8Array): string | undefined {
  const probe = head.subarray(0, LEGACY_OWNER_PROBE_BYTES);
  let end = probe.indexOf(0x0a);
  if (end === -1) {
    if (head.byteLength >= LEGACY_OWNER_PROBE_BYTES) return undefined;
    end = probe.byteLength;
  }
  // The decoder drops a leading BOM; JSON.parse takes the `\r` of a CRLF as whitespace.
  let line: unknown;
  try {
    line = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(probe.subarray(0, end)));
  } catch {
    return undefined;
  }
  if (typeof line !== "object" || line === null || Array.isArray(line)) return undefined;
  const owner = (line as { sessionId?: unknown }).sessionId;
  return typeof owner === "string" && isSessionId(owner) ? owner : undefined;
}

/**
 * Opens `root/segments…` for reading without following a link anywhere below `root` and without
 * blocking on a FIFO; `symlink` or `other` instead of a file when it is not a regular one, null
 * when it is gone.
 */
async function openSessionFile(
  root: string | OpenedDirectory,
  segments: readonly string[],
): Promise<OpenedFile | { refused: "symlink" | "other" } | null> {
  try {
    return await openFileBeneath(root, segments);
  } catch (err) {
    if (StowageError.is(err, "FORBIDDEN") && err.reason === "SYMLINK_REFUSED") return { refused: "symlink" };
    if (StowageError.is(err, "FORBIDDEN") && err.reason === "NOT_A_REGULAR_FILE") return { refused: "other" };
    throw err;
  }
}

/**
 * The session id written in the first line of the transcript `name` in `directory`, if one is
 * found there; undefined too when it is a link (never followed), not a regular file (a FIFO is
 * opened without blocking, then refused) or gone.
 */
export async function transcriptOwner(
  directory: string | OpenedDirectory,
  name: string,
): Promise<string | undefined> {
  const opened = await openSessionFile(directory, [name]);
  if (opened === null || "refused" in opened) return undefined;
  try {
    const buffer = new Uint8Array(LEGACY_OWNER_PROBE_BYTES);
    const { bytesRead } = await opened.handle.read(buffer, 0, buffer.byteLength, 0);
    return legacyAgentOwner(buffer.subarray(0, bytesRead));
  } finally {
    await opened.handle.close();
  }
}

/** What reading one file of a session gave: its bytes, or why it is not part of the snapshot. */
export type SessionFileRead =
  | { bytes: Uint8Array; mtimeMs: number }
  | { oversize: number }
  | { refused: "symlink" | "other" | "missing" };

/**
 * Reads one file of a session as it is now, whatever was listed: it is opened by walking from
 * `root` one name at a time, so a link (at the file or at any directory between `root` and it) is
 * never followed and a FIFO or device is never read, since the agent may swap them in at any
 * time. A file over `limit` bytes is not read (`oversize`, its size); one that grows while read is
 * read up to `limit + 1` bytes, so that the caller sees it pass the limit.
 */
export async function readSessionFile(
  file: Pick<SessionFile, "root" | "segments">,
  limit: number,
  signal?: AbortSignal,
): Promise<SessionFileRead> {
  const opened = await openSessionFile(file.root, file.segments);
  if (opened === null) return { refused: "missing" };
  if ("refused" in opened) return opened;
  const { handle, stats } = opened;
  try {
    if (stats.size > limit) return { oversize: stats.size };
    const chunks: Uint8Array[] = [];
    let total = 0;
    let want = Math.min(stats.size, limit) + 1;
    while (total <= limit) {
      throwIfAborted(signal, "capture session");
      const buffer = new Uint8Array(Math.min(want, limit + 1 - total));
      const { bytesRead } = await handle.read(buffer, 0, buffer.byteLength, total);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
      want = READ_CHUNK_BYTES;
    }
    return { bytes: concatBytes(chunks, total), mtimeMs: stats.mtimeMs };
  } finally {
    await handle.close();
  }
}

/**
 * `name` opened beneath `parent` without following a link (`symlink` when it is one, or no longer
 * a directory); null when it is gone.
 */
function openSubdirectory(
  parent: string | OpenedDirectory,
  name: string,
): OpenedDirectory | "symlink" | null {
  try {
    return openDirectoryBeneath(parent, [name], { refuseNonDirectories: true });
  } catch (err) {
    if (StowageError.is(err, "FORBIDDEN")) return "symlink";
    throw err;
  }
}

/** NOT_FOUND: the session's transcript (or the directory it should be in) is not there. */
function transcriptNotFound(transcriptPath: string, cause?: unknown): StowageError {
  return new StowageError("NOT_FOUND", `session transcript not found: ${transcriptPath}`, {
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Where Claude Code's project directory is reached from: the config directory, then `projects/<key>`. */
function projectWalk(location: ClaudeSessionLocation): { root: string; segments: string[] } {
  const root = dirname(dirname(location.projectDir));
  const segments = ["projects", location.projectKey];
  if (join(root, ...segments) !== location.projectDir) {
    throw new StowageError(
      "INVALID_INPUT",
      `the project directory ${location.projectDir} is not <configDir>/projects/${location.projectKey}`,
    );
  }
  return { root, segments };
}

/**
 * The project directory, opened beneath the config directory (a link at `projects` or at the
 * project's own directory is FORBIDDEN, `SYMLINK_REFUSED`: never followed), held for the whole
 * listing.
 */
function openProjectDirectory(location: ClaudeSessionLocation, walk: { root: string; segments: string[] }) {
  let opened: OpenedDirectory | null;
  try {
    opened = openDirectoryBeneath(walk.root, walk.segments);
  } catch (err) {
    // A file where a directory of the path should be: there is no such project.
    if (StowageError.is(err, "CONFLICT")) throw transcriptNotFound(location.transcriptPath, err);
    throw err;
  }
  if (!opened) throw transcriptNotFound(location.transcriptPath);
  return opened;
}

/**
 * The files that make up a session: the main transcript, every regular file under the companion
 * directory, and (unless turned off) legacy `agent-*.jsonl` files whose lines name this session.
 * Everything is reached from the config directory one name at a time, through the project
 * directory held open: symlinks and other non-regular files are never followed; they are
 * reported as skipped (a link on the way to the project directory is FORBIDDEN).
 */
export async function collectSessionFiles(
  location: ClaudeSessionLocation,
  options: { includeLegacyAgents: boolean; signal?: AbortSignal },
): Promise<{ files: SessionFile[]; skipped: SkippedFile[] }> {
  const walkToProject = projectWalk(location);
  const project = openProjectDirectory(location, walkToProject);
  try {
    return await collectInProject(location, project, walkToProject, options);
  } finally {
    project.close();
  }
}

async function collectInProject(
  location: ClaudeSessionLocation,
  project: OpenedDirectory,
  { root, segments: projectSegments }: { root: string; segments: string[] },
  options: { includeLegacyAgents: boolean; signal?: AbortSignal },
): Promise<{ files: SessionFile[]; skipped: SkippedFile[] }> {
  const { sessionId, projectDir, transcriptPath } = location;
  const files: SessionFile[] = [];
  const skipped: SkippedFile[] = [];
  const fileAt = (path: string, absolute: string): SessionFile => ({
    path,
    absolute,
    root,
    segments: [...projectSegments, ...path.split("/")],
  });
  const main = `${sessionId}.jsonl`;
  let mainInfo: Awaited<ReturnType<typeof lstat>>;
  try {
    mainInfo = await lstat(`${project.path}/${main}`);
  } catch (err) {
    if (isMissing(err)) throw transcriptNotFound(transcriptPath, err);
    throw err;
  }
  if (!mainInfo.isFile()) {
    throw new StowageError(
      "INVALID_INPUT",
      `session transcript ${transcriptPath} is not a regular file (symlinks are not followed)`,
    );
  }
  files.push(fileAt(main, transcriptPath));

  // Each directory is held open while its entries are read and its subdirectories are opened
  // beneath it: one swapped for a link after it was listed is refused, never walked through.
  const walk = async (directory: OpenedDirectory, relative: string): Promise<void> => {
    throwIfAborted(options.signal, "capture session");
    for (const entry of (await readdirOrEmpty(directory.path)).sort(byName)) {
      const path = `${relative}/${entry.name}`;
      const problem = pathSegmentProblem(entry.name);
      if (problem) skipped.push({ path, reason: `unsafe name: ${problem}` });
      else if (entry.isDirectory()) {
        const sub = openSubdirectory(directory, entry.name);
        if (sub === "symlink") skipped.push({ path, reason: notRegularFileReason(path, true) });
        else if (sub) {
          try {
            await walk(sub, path);
          } finally {
            sub.close();
          }
        }
      } else if (entry.isFile()) {
        files.push(fileAt(path, join(directory.lexicalPath, entry.name)));
      } else skipped.push({ path, reason: notRegularFileReason(path, entry.isSymbolicLink()) });
      if (files.length > MAX_ARCHIVE_ENTRIES) {
        throw new StowageError("TOO_LARGE", `session has more than ${MAX_ARCHIVE_ENTRIES} files`, {
          details: { limit: MAX_ARCHIVE_ENTRIES },
        });
      }
    }
  };
  const companion = await lstat(`${project.path}/${sessionId}`).catch((err: unknown) => {
    if (isMissing(err)) return undefined;
    throw err;
  });
  const companionOpened = companion?.isDirectory()
    ? openSubdirectory(project, sessionId)
    : companion && "symlink";
  if (companionOpened === "symlink") {
    skipped.push({ path: sessionId, reason: "companion path is not a directory" });
  } else if (companionOpened) {
    try {
      await walk(companionOpened, sessionId);
    } finally {
      companionOpened.close();
    }
  }

  if (options.includeLegacyAgents) {
    for (const entry of (await readdirOrEmpty(project.path)).sort(byName)) {
      if (!LEGACY_AGENT_FILE_PATTERN.test(entry.name)) continue;
      if (!entry.isFile()) {
        skipped.push({ path: entry.name, reason: notRegularFileReason(entry.name, entry.isSymbolicLink()) });
        continue;
      }
      const owner = await transcriptOwner(project, entry.name);
      if (owner === undefined) {
        skipped.push({
          path: entry.name,
          reason: "legacy agent transcript names no session in its first line",
        });
      } else if (owner === sessionId) {
        files.push(fileAt(entry.name, join(projectDir, entry.name)));
      }
    }
  }
  return { files, skipped };
}
