import { link, unlink } from "node:fs/promises";
import { errnoOf, StowageError } from "@stowage/core";
import {
  fsyncDirectory,
  type OpenedDirectory,
  openDirectoryBeneath,
  openFileBeneath,
  writeTempFile,
} from "@stowage/core/fs";
import type { SessionArchiveEntry } from "../archive/manifest.js";
import { CLAUDE_JSON_MCP_ENTRY, mergeClaudeJsonMcpServers } from "../claude/claude-json-mcp.js";
import {
  PROJECT_CONFIG_ENTRY_PREFIX,
  PROJECT_DIR_ENTRY_PREFIX,
  USER_CONFIG_ENTRY_PREFIX,
} from "./configuration-layout.js";

/** What a restore did with the configuration an archive holds (paths as in the archive). */
export interface RestoredConfiguration {
  /** Written where there was none. */
  written: string[];
  /** Already there with the same bytes. */
  unchanged: string[];
  /** Already there with other bytes: the file there wins, a restore never replaces configuration. */
  kept: string[];
  /** Not written, with the reason (a link on the way, no working directory given, an I/O error). */
  skipped: { path: string; reason: string }[];
}

const sameBytes = (a: Uint8Array, b: Uint8Array) =>
  a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);

/** The bytes of the regular file `name` in `parent`; `other` for a link or anything else there; null when none. */
export async function existingBytes(
  parent: OpenedDirectory,
  name: string,
): Promise<Uint8Array | "other" | null> {
  try {
    const opened = await openFileBeneath(parent, [name]);
    if (!opened) return null;
    try {
      return new Uint8Array(await opened.handle.readFile());
    } finally {
      await opened.handle.close();
    }
  } catch (err) {
    // A link or a directory there: not ours to replace.
    if (StowageError.is(err, "FORBIDDEN")) return "other";
    throw err;
  }
}

/**
 * Writes one configuration file beneath `root` where none is, create-only (a temp file in the
 * same directory, then linked into place), never through a link.
 */
async function writeOne(
  root: string,
  path: string,
  rest: string,
  bytes: Uint8Array,
  fsync: boolean,
  result: RestoredConfiguration,
): Promise<void> {
  const segments = rest.split("/");
  const name = segments.pop()!;
  let parent: OpenedDirectory;
  try {
    parent = openDirectoryBeneath(root, segments, { create: true, refuseNonDirectories: true })!;
  } catch (err) {
    if (!StowageError.is(err, "FORBIDDEN") && !StowageError.is(err, "CONFLICT")) throw err;
    result.skipped.push({ path, reason: "a link or a file where a directory of it goes (never followed)" });
    return;
  }
  try {
    const existing = await existingBytes(parent, name);
    if (existing === "other") result.kept.push(path);
    else if (existing !== null) (sameBytes(existing, bytes) ? result.unchanged : result.kept).push(path);
    else {
      const temp = await writeTempFile(parent.path, bytes, { fsync });
      try {
        await link(temp.path, `${parent.path}/${name}`);
        result.written.push(path);
        if (fsync) await fsyncDirectory(parent.path);
      } catch (err) {
        if (errnoOf(err) !== "EEXIST") throw err;
        result.kept.push(path);
      } finally {
        await unlink(temp.path).catch(() => {});
      }
    }
  } finally {
    parent.close();
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Puts the configuration an archive holds where its agent reads it: `~user/…` in the user's
 * configuration directory (Claude Code's config directory, `$CODEX_HOME`, OpenCode's config
 * directory), `~project/…` in the working directory (skipped when none is given). Configuration
 * is the user's, not the session's: a file already there is never replaced (`kept`), and no
 * link is followed. Runs once the session's own files are in place, so a file that fails to be
 * written is reported in `skipped` with the error rather than failing a restore already done.
 */
export async function restoreConfiguration(
  files: readonly { entry: SessionArchiveEntry; bytes: Uint8Array }[],
  roots: { configDir: string; cwd: string | undefined; projectKey?: string | undefined },
  fsync: boolean,
): Promise<RestoredConfiguration> {
  const result: RestoredConfiguration = { written: [], unchanged: [], kept: [], skipped: [] };
  for (const { entry, bytes } of files) {
    try {
      if (entry.path === CLAUDE_JSON_MCP_ENTRY) {
        await mergeClaudeJsonMcpServers(bytes, roots, fsync, result);
        continue;
      }
      const place = placeOf(entry.path, roots);
      if (typeof place === "string") result.skipped.push({ path: entry.path, reason: place });
      else await writeOne(place.root, entry.path, place.rest, bytes, fsync, result);
    } catch (err) {
      // The session is in place already: a file that cannot be written (a full disk, a read-only
      // directory) is reported, and the restore, which cannot be undone halfway, stands.
      result.skipped.push({ path: entry.path, reason: `not written: ${messageOf(err)}` });
    }
  }
  return result;
}

/** Where a configuration entry goes: a root and the path below it, or why it goes nowhere. */
function placeOf(
  path: string,
  roots: { configDir: string; cwd: string | undefined; projectKey?: string | undefined },
): { root: string; rest: string } | string {
  if (path.startsWith(PROJECT_CONFIG_ENTRY_PREFIX)) {
    if (roots.cwd === undefined) {
      return "the project's configuration is restored only into a working directory (cwd)";
    }
    return { root: roots.cwd, rest: path.slice(PROJECT_CONFIG_ENTRY_PREFIX.length) };
  }
  if (path.startsWith(PROJECT_DIR_ENTRY_PREFIX)) {
    if (roots.projectKey === undefined) return "the project's memory goes only into a Claude Code project";
    const rest = path.slice(PROJECT_DIR_ENTRY_PREFIX.length);
    return { root: roots.configDir, rest: `projects/${roots.projectKey}/${rest}` };
  }
  return { root: roots.configDir, rest: path.slice(USER_CONFIG_ENTRY_PREFIX.length) };
}
