import { constants, type Dirent } from "node:fs";
import { type FileHandle, lstat, open, readdir } from "node:fs/promises";
import { join } from "node:path";
import {
  concatBytes,
  errnoOf,
  isSessionId,
  pathSegmentProblem,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath } from "@stowage/core/fs";
import type { ClaudeSessionLocation } from "../claude/session-location.js";
import { LEGACY_AGENT_FILE_PATTERN } from "./entry-path.js";
import { MAX_ARCHIVE_ENTRIES } from "./manifest.js";

/** Bytes read from the start of a legacy `agent-*.jsonl` to find which session it belongs to. */
export const LEGACY_OWNER_PROBE_BYTES = 64 * 1024;

/** Bytes read at a time once a file has grown past the size it had when it was opened. */
const READ_CHUNK_BYTES = 1024 * 1024;

export interface SessionFile {
  /** Relative to the project directory, `/`-separated. */
  path: string;
  absolute: string;
  /** The project directory: `path`'s directories are opened beneath it, never through a link. */
  root: string;
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
 * Opens `path` for reading without following a link at its last component and without blocking
 * on a FIFO; `symlink` or `other` instead of a handle when it is not a regular file.
 */
async function openRegularFile(
  path: string,
): Promise<{ handle: FileHandle; mtimeMs: number; size: number } | { refused: "symlink" | "other" }> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (errnoOf(err) === "ELOOP") return { refused: "symlink" };
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      return { refused: "other" };
    }
    return { handle, mtimeMs: info.mtimeMs, size: info.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * The session id written in the first line of the transcript at `path`, if one is found there;
 * undefined too when `path` is a link (never followed) or not a regular file (a FIFO is opened
 * without blocking, then refused).
 */
export async function transcriptOwner(path: string): Promise<string | undefined> {
  const opened = await openRegularFile(path);
  if ("refused" in opened) return undefined;
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

/** Opens the directory `path` is in beneath `root`, a link on the way refused; null when gone. */
function openParentBeneath(root: string, path: string): OpenedDirectory | "symlink" | null {
  const segments = path.split("/").slice(0, -1);
  try {
    return openDirectoryBeneath(root, segments);
  } catch (err) {
    if (StowageError.is(err, "FORBIDDEN")) return "symlink";
    // A file now where one of its directories was: the file itself is gone.
    if (StowageError.is(err, "CONFLICT")) return null;
    throw err;
  }
}

/**
 * Reads one file of a session as it is now, whatever was listed: a link (at the file or, given
 * `root`, at any directory between `root` and it) is never followed and a FIFO or device is
 * never read, since the agent may swap them in at any time. A file over `limit` bytes is not read
 * (`oversize`, its size); one that grows while read is read up to `limit + 1` bytes, so that the
 * caller sees it pass the limit.
 */
export async function readSessionFile(
  file: { path: string; absolute: string; root?: string },
  limit: number,
  signal?: AbortSignal,
): Promise<SessionFileRead> {
  let directory: OpenedDirectory | null = null;
  let opened: Awaited<ReturnType<typeof openRegularFile>>;
  try {
    let at = file.absolute;
    if (file.root !== undefined && file.path.includes("/")) {
      const parent = openParentBeneath(file.root, file.path);
      if (parent === null) return { refused: "missing" };
      if (parent === "symlink") return { refused: "symlink" };
      directory = parent;
      at = `${parent.path}/${file.path.slice(file.path.lastIndexOf("/") + 1)}`;
    }
    opened = await openRegularFile(at);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return { refused: "missing" };
    throw err;
  } finally {
    directory?.close();
  }
  if ("refused" in opened) return opened;
  const { handle, mtimeMs, size } = opened;
  try {
    if (size > limit) return { oversize: size };
    const chunks: Uint8Array[] = [];
    let total = 0;
    let want = Math.min(size, limit) + 1;
    while (total <= limit) {
      throwIfAborted(signal, "capture session");
      const buffer = new Uint8Array(Math.min(want, limit + 1 - total));
      const { bytesRead } = await handle.read(buffer, 0, buffer.byteLength, total);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
      want = READ_CHUNK_BYTES;
    }
    return { bytes: concatBytes(chunks, total), mtimeMs };
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

/**
 * The files that make up a session: the main transcript, every regular file under the companion
 * directory, and (unless turned off) legacy `agent-*.jsonl` files whose lines name this session.
 * Symlinks and other non-regular files are never followed; they are reported as skipped.
 */
export async function collectSessionFiles(
  location: ClaudeSessionLocation,
  options: { includeLegacyAgents: boolean; signal?: AbortSignal },
): Promise<{ files: SessionFile[]; skipped: SkippedFile[] }> {
  const { sessionId, projectDir, transcriptPath, companionDir } = location;
  const files: SessionFile[] = [];
  const skipped: SkippedFile[] = [];
  const main = `${sessionId}.jsonl`;
  let mainInfo: Awaited<ReturnType<typeof lstat>>;
  try {
    mainInfo = await lstat(transcriptPath);
  } catch (err) {
    if (isMissing(err)) {
      throw new StowageError("NOT_FOUND", `session transcript not found: ${transcriptPath}`, { cause: err });
    }
    throw err;
  }
  if (!mainInfo.isFile()) {
    throw new StowageError(
      "INVALID_INPUT",
      `session transcript ${transcriptPath} is not a regular file (symlinks are not followed)`,
    );
  }
  files.push({ path: main, absolute: transcriptPath, root: projectDir });

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
        files.push({ path, absolute: join(directory.lexicalPath, entry.name), root: projectDir });
      } else skipped.push({ path, reason: notRegularFileReason(path, entry.isSymbolicLink()) });
      if (files.length > MAX_ARCHIVE_ENTRIES) {
        throw new StowageError("TOO_LARGE", `session has more than ${MAX_ARCHIVE_ENTRIES} files`);
      }
    }
  };
  const companion = await lstat(companionDir).catch((err: unknown) => {
    if (isMissing(err)) return undefined;
    throw err;
  });
  const companionOpened = companion?.isDirectory()
    ? openSubdirectory(projectDir, sessionId)
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
    for (const entry of (await readdirOrEmpty(projectDir)).sort(byName)) {
      if (!LEGACY_AGENT_FILE_PATTERN.test(entry.name)) continue;
      if (!entry.isFile()) {
        skipped.push({ path: entry.name, reason: notRegularFileReason(entry.name, entry.isSymbolicLink()) });
        continue;
      }
      const absolute = join(projectDir, entry.name);
      const owner = await transcriptOwner(absolute).catch((err: unknown) => {
        if (isMissing(err)) return undefined;
        throw err;
      });
      if (owner === undefined) {
        skipped.push({
          path: entry.name,
          reason: "legacy agent transcript names no session in its first line",
        });
      } else if (owner === sessionId) {
        files.push({ path: entry.name, absolute, root: projectDir });
      }
    }
  }
  return { files, skipped };
}
