import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { describeValue, StowageError } from "@stowage/core";
import { assertSessionId } from "../agents/session-id.js";
import { assertProjectKey, claudeProjectKey } from "./project-key.js";

export interface ClaudeSessionLocationOptions {
  /** Claude Code's config directory. Default: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
  configDir?: string;
  /** The agent's working directory; the project key is derived from it. */
  cwd?: string;
  /** The project key itself, when it is already known (instead of `cwd`). */
  projectKey?: string;
  sessionId: string;
  signal?: AbortSignal;
}

export interface ClaudeSessionLocation {
  sessionId: string;
  projectKey: string;
  /** `<configDir>/projects/<projectKey>`: holds this and other sessions of the project. */
  projectDir: string;
  /** `<projectDir>/<sessionId>.jsonl`: the main transcript. */
  transcriptPath: string;
  /** `<projectDir>/<sessionId>/`: `subagents/` and `tool-results/` (Claude Code 2.1.2 and later). */
  companionDir: string;
}

/** `$CLAUDE_CONFIG_DIR` when set, else `~/.claude`, as Claude Code resolves it. */
export function defaultClaudeConfigDir(): string {
  const fromEnv = process.env.CLAUDE_CONFIG_DIR;
  return fromEnv ? resolve(fromEnv) : join(homedir(), ".claude");
}

/** Where a project's sessions are: `<configDir>/projects/<projectKey>`. */
export interface ClaudeProjectDir {
  projectKey: string;
  projectDir: string;
}

/**
 * The directory of a project's Claude Code sessions, from `cwd` (with Claude Code's own rule) or
 * a `projectKey`, under `configDir` (default `$CLAUDE_CONFIG_DIR`, else `~/.claude`).
 */
export async function claudeProjectDir(
  options: Omit<ClaudeSessionLocationOptions, "sessionId">,
): Promise<ClaudeProjectDir> {
  if ((options?.cwd === undefined) === (options?.projectKey === undefined)) {
    throw new StowageError("INVALID_INPUT", "give exactly one of cwd or projectKey to locate a session");
  }
  if (
    options.configDir !== undefined &&
    (typeof options.configDir !== "string" || options.configDir === "")
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `configDir must be a non-empty path, got ${describeValue(options.configDir)}`,
    );
  }
  let projectKey: string;
  if (options.projectKey !== undefined) {
    assertProjectKey(options.projectKey);
    projectKey = options.projectKey;
  } else {
    projectKey = await claudeProjectKey(
      options.cwd as string,
      options.signal ? { signal: options.signal } : {},
    );
  }
  const configDir = resolve(options.configDir ?? defaultClaudeConfigDir());
  return { projectKey, projectDir: join(configDir, "projects", projectKey) };
}

/**
 * Where Claude Code keeps a session's files. The session id is validated (a UUID) and the
 * project key is derived with Claude Code's own rule before any path is built.
 */
export async function claudeSessionLocation(
  options: ClaudeSessionLocationOptions,
): Promise<ClaudeSessionLocation> {
  assertSessionId(options?.sessionId);
  const { sessionId } = options;
  const { projectKey, projectDir } = await claudeProjectDir(options);
  return {
    sessionId,
    projectKey,
    projectDir,
    transcriptPath: join(projectDir, `${sessionId}.jsonl`),
    companionDir: join(projectDir, sessionId),
  };
}
