import { isSessionId, keyProblem } from "@stowage/core";
import type { SessionAgent } from "../agents/session-agent.js";
import { CONFIG_DIR_ENTRY_PREFIX, configEntryProblem } from "../claude/session-environment.js";
import { CODEX_GOAL_ENTRY } from "../codex/codex-goal.js";
import { codexRolloutPathProblem, sessionIdOfRolloutName } from "../codex/rollout-path.js";
import { configurationEntryProblem, isConfigurationEntry } from "../configuration/agent-configuration.js";
import { opencodeExportFileName } from "../opencode/export-file.js";

/** A subagent transcript written beside the main one by Claude Code before 2.1.2. */
export const LEGACY_AGENT_FILE_PATTERN = /^agent-[A-Za-z0-9_-]{1,128}\.jsonl$/;

/**
 * Why `path` may not be an entry of `sessionId`'s archive for `agent`, or undefined when it may.
 * Never `..`, an absolute path, a backslash, NUL or another control character, nor another
 * session's file. Per agent, relative to where the agent keeps the session:
 * - Claude Code (the project directory): the main transcript `<sessionId>.jsonl`, a file under
 *   the companion directory `<sessionId>/…`, or a legacy `agent-<id>.jsonl`; and, under
 *   `~config/` (the config directory), the session's own files there (`configEntryProblem`);
 * - Codex (`$CODEX_HOME/sessions`): `YYYY/MM/DD/rollout-<time>-<sessionId>.jsonl`, and its
 *   subagents' `YYYY/MM/DD/rollout-<time>-<threadId>.jsonl` (the manifest puts the session's own
 *   first), and the thread's goal as `~codex/goal.json` (read through `codex app-server`);
 * - OpenCode: `<sessionId>.json`, the output of `opencode export`, then its child sessions' `<id>.json`;
 * - every agent, captured on request: the user's configuration under `~user/` and the project's
 *   under `~project/`, each only where the agent reads it (`configurationEntryProblem`).
 */
export function entryPathProblem(path: unknown, sessionId: string, agent: SessionAgent): string | undefined {
  const problem = keyProblem(path);
  if (problem) return problem;
  const value = path as string;
  if (isConfigurationEntry(value)) return configurationEntryProblem(value, agent);
  if (agent === "codex") {
    if (value === CODEX_GOAL_ENTRY) return undefined;
    const own = codexRolloutPathProblem(value, sessionId);
    if (own === undefined) return undefined;
    // A subagent's rollout, named by its own thread id (whose it is, its first line says).
    const id = sessionIdOfRolloutName(value.slice(value.lastIndexOf("/") + 1));
    return id !== undefined && isSessionId(id) && codexRolloutPathProblem(value, id) === undefined
      ? undefined
      : own;
  }
  if (agent === "opencode") {
    const expected = opencodeExportFileName(sessionId);
    if (value === expected) return undefined;
    // A child session's export (a `task` subagent's), named by its own id.
    const id = value.endsWith(".json") ? value.slice(0, -".json".length) : "";
    return isSessionId(id) && value === opencodeExportFileName(id)
      ? undefined
      : `must be "${expected}" or a child session's "<id>.json"`;
  }
  if (value.startsWith(CONFIG_DIR_ENTRY_PREFIX)) {
    return configEntryProblem(value.slice(CONFIG_DIR_ENTRY_PREFIX.length), sessionId);
  }
  if (value === `${sessionId}.jsonl`) return undefined;
  if (value.startsWith(`${sessionId}/`)) return undefined;
  if (LEGACY_AGENT_FILE_PATTERN.test(value)) return undefined;
  return `must be "${sessionId}.jsonl", a file under "${sessionId}/", a legacy "agent-<id>.jsonl" or the session's file under "${CONFIG_DIR_ENTRY_PREFIX}"`;
}
