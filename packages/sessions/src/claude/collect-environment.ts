import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, pathSegmentProblem, StowageError } from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath } from "@stowage/core/fs";
import type { SessionFile, SkippedFile } from "../archive/collect-files.js";
import {
  CLAUDE_SESSION_DIRECTORIES,
  CONFIG_DIR_ENTRY_PREFIX,
  isMachineLocalSessionFile,
  isPlanFileOf,
  isTodoFileOf,
} from "./session-environment.js";

/** What was found: the files to capture, and those left out with the reason. */
export interface CollectedFiles {
  files: SessionFile[];
  skipped: SkippedFile[];
}

/**
 * `configDir/segments…` opened without following a link: null when missing, "link" when a link
 * (or a non-directory) stands at any segment: never followed, reported as skipped.
 */
function openBeneath(configDir: string, segments: string[]): OpenedDirectory | null | "link" {
  try {
    return openDirectoryBeneath(configDir, segments, { refuseNonDirectories: true });
  } catch (err) {
    if (StowageError.is(err, "FORBIDDEN") || StowageError.is(err, "CONFLICT")) return "link";
    throw err;
  }
}

/** The regular files directly in `configDir/segments…` that `wanted` picks, in name order. */
async function filesIn(
  configDir: string,
  segments: string[],
  wanted: (name: string) => boolean,
  found: CollectedFiles,
): Promise<void> {
  const directory = openBeneath(configDir, segments);
  const where = segments.join("/");
  if (directory === "link") {
    found.skipped.push({ path: `${CONFIG_DIR_ENTRY_PREFIX}${where}`, reason: "symlink (not followed)" });
    return;
  }
  if (!directory) return;
  try {
    const entries = await readdir(directory.path, { withFileTypes: true }).catch((err: unknown) => {
      if (errnoOf(err) === "ENOENT") return [];
      throw err;
    });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (!wanted(entry.name)) continue;
      const path = `${CONFIG_DIR_ENTRY_PREFIX}${where}/${entry.name}`;
      const problem = pathSegmentProblem(entry.name);
      if (problem) found.skipped.push({ path, reason: `unsafe name: ${problem}` });
      else if (!entry.isFile()) {
        found.skipped.push({
          path,
          reason: entry.isSymbolicLink() ? "symlink (not followed)" : "not a regular file",
        });
      } else {
        found.files.push({
          path,
          absolute: join(directory.lexicalPath, entry.name),
          root: configDir,
          segments: [...segments, entry.name],
        });
      }
    }
  } finally {
    directory.close();
  }
}

/**
 * The session's files in Claude Code's config directory, never another session's: every regular
 * file of `file-history/<id>/`, `tasks/<id>/` (not its `.lock`) and `session-env/<id>/`, and
 * `todos/<id>-agent-*.json`. Each is read later from `configDir` one name at a time, never
 * through a link.
 */
export async function collectSessionEnvironment(
  configDir: string,
  sessionId: string,
): Promise<CollectedFiles> {
  const found: CollectedFiles = { files: [], skipped: [] };
  for (const directory of CLAUDE_SESSION_DIRECTORIES) {
    await filesIn(
      configDir,
      [directory, sessionId],
      (name) => !isMachineLocalSessionFile(directory, name),
      found,
    );
  }
  await filesIn(configDir, ["todos"], (name) => isTodoFileOf(name, sessionId), found);
  return found;
}

/** The plan files of the slugs the session's transcript names (`plans/<slug>.md`, its subagents'). */
export async function collectSessionPlans(
  configDir: string,
  slugs: readonly string[],
): Promise<CollectedFiles> {
  const found: CollectedFiles = { files: [], skipped: [] };
  if (slugs.length > 0) {
    await filesIn(configDir, ["plans"], (name) => slugs.some((slug) => isPlanFileOf(name, slug)), found);
  }
  return found;
}
