import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, StowageError, throwIfAborted } from "@stowage/core";
import { assertSessionId } from "../agents/session-id.js";
import { resolveCodexHome } from "./codex-home.js";
import {
  codexRolloutPathProblem,
  MONTH_OR_DAY_PATTERN,
  sessionIdOfRolloutName,
  YEAR_PATTERN,
} from "./rollout-path.js";

export interface CodexRolloutLocationOptions {
  /** Codex's home. Default: `$CODEX_HOME`, else `~/.codex`. */
  codexHome?: string;
  sessionId: string;
  signal?: AbortSignal;
}

export interface CodexRolloutLocation {
  sessionId: string;
  codexHome: string;
  /** `<codexHome>/sessions`: the rollouts of every session, in day folders. */
  sessionsDir: string;
  /** `YYYY/MM/DD/rollout-<time>-<sessionId>.jsonl`, relative to `sessionsDir`. */
  relativePath: string;
  /** The rollout file itself. */
  rolloutPath: string;
}

async function directories(path: string, pattern: RegExp): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch (err) {
    if (errnoOf(err) === "ENOENT" || errnoOf(err) === "ENOTDIR") return [];
    throw err;
  }
  // Newest first: a session being captured is most likely a recent one. Links are not followed.
  return entries
    .filter((entry) => entry.isDirectory() && pattern.test(entry.name))
    .map((entry) => entry.name)
    .sort()
    .reverse();
}

/**
 * Finds a Codex session's rollout, `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`,
 * by its session id (the id in the file name, as `codex exec` prints it and `resume` takes it).
 * Day folders are searched newest first; symbolic links are not followed. NOT_FOUND when no
 * rollout of that session is there.
 */
export async function codexRolloutLocation(
  options: CodexRolloutLocationOptions,
): Promise<CodexRolloutLocation> {
  assertSessionId(options?.sessionId);
  const { sessionId, signal } = options;
  const codexHome = resolveCodexHome(options.codexHome);
  const sessionsDir = join(codexHome, "sessions");
  for (const year of await directories(sessionsDir, YEAR_PATTERN)) {
    for (const month of await directories(join(sessionsDir, year), MONTH_OR_DAY_PATTERN)) {
      for (const day of await directories(join(sessionsDir, year, month), MONTH_OR_DAY_PATTERN)) {
        throwIfAborted(signal, `find Codex session ${sessionId}`);
        const dayDir = join(sessionsDir, year, month, day);
        const entries = await readdir(dayDir, { withFileTypes: true }).catch(() => [] as Dirent[]);
        const match = entries.find((entry) => sessionIdOfRolloutName(entry.name) === sessionId);
        if (!match) continue;
        if (!match.isFile()) {
          throw new StowageError(
            "INVALID_INPUT",
            `Codex rollout ${join(dayDir, match.name)} is not a regular file (symlinks are not followed)`,
          );
        }
        const relativePath = `${year}/${month}/${day}/${match.name}`;
        // A restore puts the rollout back at this path only if it is one Codex writes; a capture
        // says so now rather than make an archive no restore would take.
        const problem = codexRolloutPathProblem(relativePath, sessionId);
        if (problem) {
          throw new StowageError(
            "INVALID_INPUT",
            `Codex rollout ${join(dayDir, match.name)} is not where Codex puts it: its path ${problem}`,
            { reason: "UNSAFE_ENTRY_PATH", details: { path: relativePath } },
          );
        }
        return {
          sessionId,
          codexHome,
          sessionsDir,
          relativePath,
          rolloutPath: join(dayDir, match.name),
        };
      }
    }
  }
  throw new StowageError("NOT_FOUND", `no Codex rollout of session ${sessionId} under ${sessionsDir}`);
}
