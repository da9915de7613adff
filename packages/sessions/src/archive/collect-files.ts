import { constants, type Dirent } from "node:fs";
import { lstat, open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, pathSegmentProblem, StowageError, throwIfAborted } from "@stowage/core";
import type { ClaudeSessionLocation } from "../claude/session-location.js";
import { LEGACY_AGENT_FILE_PATTERN } from "./entry-path.js";
import { MAX_ARCHIVE_ENTRIES } from "./manifest.js";

/** Bytes read from the start of a legacy `agent-*.jsonl` to find which session it belongs to. */
export const LEGACY_OWNER_PROBE_BYTES = 64 * 1024;

export interface SessionFile {
  /** Relative to the project directory, `/`-separated. */
  path: string;
  absolute: string;
}

export interface SkippedFile {
  path: string;
  /** Why it was left out (a symlink, an unsafe name, …). */
  reason: string;
}

const isMissing = (err: unknown) => errnoOf(err) === "ENOENT" || errnoOf(err) === "ENOTDIR";

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
 * The session a legacy `agent-*.jsonl` belongs to: the `sessionId` its first lines carry (Claude
 * Code writes it on every line), read from the file's first {@link LEGACY_OWNER_PROBE_BYTES}.
 */
export function legacyAgentOwner(head: Uint8Array): string | undefined {
  const text = new TextDecoder().decode(head.subarray(0, LEGACY_OWNER_PROBE_BYTES));
  return /"sessionId":"([A-Za-z0-9._:@-]{1,128})"/.exec(text)?.[1];
}

/**
 * The session id written in the first lines of the transcript at `path`, if one is found there;
 * undefined too when `path` is a link (never followed) or not a regular file (a FIFO is opened
 * without blocking, then refused).
 */
export async function transcriptOwner(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (errnoOf(err) === "ELOOP") return undefined;
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    const buffer = new Uint8Array(LEGACY_OWNER_PROBE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.byteLength, 0);
    return legacyAgentOwner(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
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
  files.push({ path: main, absolute: transcriptPath });

  const walk = async (directory: string, relative: string): Promise<void> => {
    throwIfAborted(options.signal, "capture session");
    for (const entry of (await readdirOrEmpty(directory)).sort(byName)) {
      const path = `${relative}/${entry.name}`;
      const problem = pathSegmentProblem(entry.name);
      if (problem) skipped.push({ path, reason: `unsafe name: ${problem}` });
      else if (entry.isDirectory()) await walk(join(directory, entry.name), path);
      else if (entry.isFile()) files.push({ path, absolute: join(directory, entry.name) });
      else
        skipped.push({
          path,
          reason: entry.isSymbolicLink() ? "symlink (not followed)" : "not a regular file",
        });
      if (files.length > MAX_ARCHIVE_ENTRIES) {
        throw new StowageError("TOO_LARGE", `session has more than ${MAX_ARCHIVE_ENTRIES} files`);
      }
    }
  };
  const companion = await lstat(companionDir).catch((err: unknown) => {
    if (isMissing(err)) return undefined;
    throw err;
  });
  if (companion?.isDirectory()) await walk(companionDir, sessionId);
  else if (companion) skipped.push({ path: sessionId, reason: "companion path is not a directory" });

  if (options.includeLegacyAgents) {
    for (const entry of (await readdirOrEmpty(projectDir)).sort(byName)) {
      if (!LEGACY_AGENT_FILE_PATTERN.test(entry.name)) continue;
      if (!entry.isFile()) {
        skipped.push({ path: entry.name, reason: "legacy agent transcript is not a regular file" });
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
          reason: "legacy agent transcript names no session in its first lines",
        });
      } else if (owner === sessionId) {
        files.push({ path: entry.name, absolute });
      }
    }
  }
  return { files, skipped };
}
