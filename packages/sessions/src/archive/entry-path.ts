import { keyProblem } from "@stowage/core";

/** A subagent transcript written beside the main one by Claude Code before 2.1.2. */
export const LEGACY_AGENT_FILE_PATTERN = /^agent-[A-Za-z0-9_-]{1,128}\.jsonl$/;

/**
 * Why `path` may not be an entry of `sessionId`'s archive, or undefined when it may. An entry is
 * relative to the project directory and is the main transcript (`<sessionId>.jsonl`), a file
 * under the companion directory (`<sessionId>/…`), or a legacy `agent-<id>.jsonl`: never `..`,
 * an absolute path, a backslash, NUL or another control character, nor another session's file.
 */
export function entryPathProblem(path: unknown, sessionId: string): string | undefined {
  const problem = keyProblem(path);
  if (problem) return problem;
  const value = path as string;
  if (value === `${sessionId}.jsonl`) return undefined;
  if (value.startsWith(`${sessionId}/`)) return undefined;
  if (LEGACY_AGENT_FILE_PATTERN.test(value)) return undefined;
  return `must be "${sessionId}.jsonl", a file under "${sessionId}/", or a legacy "agent-<id>.jsonl"`;
}

/** The name in the project directory that `path` lives under (its first segment). */
export function topLevelName(path: string): string {
  const slash = path.indexOf("/");
  return slash < 0 ? path : path.slice(0, slash);
}
