import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, fromSystemError, isSessionId } from "@stowage/core";
import { LEGACY_AGENT_FILE_PATTERN } from "../archive/entry-path.js";
import { type ClaudeSessionLocationOptions, claudeProjectDir } from "./session-location.js";

/** One Claude Code session of a project, as {@link listClaudeSessions} finds it. */
export interface ClaudeSessionInfo {
  sessionId: string;
  /** `<projectDir>/<sessionId>.jsonl`. */
  transcriptPath: string;
  sizeBytes: number;
  modified: Date;
}

/** What {@link listClaudeSessions} found. */
export interface ClaudeSessionListing {
  projectKey: string;
  projectDir: string;
  /** In session-id order; empty when the project has no directory yet. */
  sessions: ClaudeSessionInfo[];
}

/**
 * The Claude Code sessions of a project (from `cwd` or `projectKey`, under `configDir`): every
 * `<sessionId>.jsonl` transcript in its directory, each one `captureSession` can take. Legacy
 * subagent transcripts (`agent-<id>.jsonl`, Claude Code before 2.1.2) sit beside them and are not
 * sessions; links and other non-files are left out.
 */
export async function listClaudeSessions(
  options: Omit<ClaudeSessionLocationOptions, "sessionId">,
): Promise<ClaudeSessionListing> {
  const { projectKey, projectDir } = await claudeProjectDir(options);
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(projectDir, { withFileTypes: true });
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return { projectKey, projectDir, sessions: [] };
    throw fromSystemError(err, `list sessions in ${projectDir}`);
  }
  const sessions: ClaudeSessionInfo[] = [];
  for (const entry of entries) {
    const sessionId = entry.name.slice(0, -".jsonl".length);
    if (!entry.isFile() || !entry.name.endsWith(".jsonl") || LEGACY_AGENT_FILE_PATTERN.test(entry.name))
      continue;
    if (!isSessionId(sessionId)) continue;
    const transcriptPath = join(projectDir, entry.name);
    const info = await stat(transcriptPath).catch(() => undefined);
    // Gone since the listing: not a session any more.
    if (info) sessions.push({ sessionId, transcriptPath, sizeBytes: info.size, modified: info.mtime });
  }
  sessions.sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
  return { projectKey, projectDir, sessions };
}
