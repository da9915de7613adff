import { realpath } from "node:fs/promises";
import { resolve } from "node:path";
import { describeValue, StowageError, throwIfAborted } from "@stowage/core";

/** Longest sanitized path Claude Code uses as a project directory name before hashing. */
export const MAX_PROJECT_KEY_PREFIX = 200;

/** What Claude Code's sanitizer produces: ASCII letters, digits and `-`. */
export const PROJECT_KEY_PATTERN = /^[A-Za-z0-9-]{1,255}$/;

// Java-style 31-multiplier string hash over UTF-16 code units, signed 32-bit, as Claude Code
// computes it (the same value under Bun and Node).
function pathHash(path: string): string {
  let hash = 0;
  for (let i = 0; i < path.length; i++) hash = ((hash << 5) - hash + path.charCodeAt(i)) | 0;
  return Math.abs(hash).toString(36);
}

/**
 * The project directory name for an already-resolved path: every character outside
 * `[a-zA-Z0-9]` becomes `-`; past 200 characters, the first 200 plus `-` and a base-36 hash of
 * the whole path. Pure; {@link claudeProjectKey} resolves symlinks first.
 */
export function sanitizeProjectPath(path: string): string {
  if (typeof path !== "string" || path.length === 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `project path must be a non-empty string, got ${describeValue(path)}`,
    );
  }
  const sanitized = path.replace(/[^a-zA-Z0-9]/g, "-");
  if (sanitized.length <= MAX_PROJECT_KEY_PREFIX) return sanitized;
  return `${sanitized.slice(0, MAX_PROJECT_KEY_PREFIX)}-${pathHash(path)}`;
}

/**
 * The project key Claude Code files a session under for `cwd`: the real path (symlinks resolved;
 * the resolved path itself when it does not exist), NFC-normalized on macOS, then sanitized.
 */
export async function claudeProjectKey(cwd: string, options: { signal?: AbortSignal } = {}): Promise<string> {
  if (typeof cwd !== "string" || cwd.length === 0 || cwd.includes("\u0000")) {
    throw new StowageError(
      "INVALID_INPUT",
      `cwd must be a non-empty path without NUL, got ${describeValue(cwd)}`,
    );
  }
  throwIfAborted(options.signal, "claude project key");
  const absolute = resolve(cwd);
  let real: string;
  try {
    real = await realpath(absolute);
  } catch {
    real = absolute;
  }
  return sanitizeProjectPath(process.platform === "darwin" ? real.normalize("NFC") : real);
}

/** Throws INVALID_INPUT unless `value` looks like a key {@link sanitizeProjectPath} produces. */
export function assertProjectKey(value: unknown): asserts value is string {
  if (typeof value !== "string" || !PROJECT_KEY_PATTERN.test(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `project key must be 1 to 255 characters of [A-Za-z0-9-] (a sanitized cwd), got ${describeValue(value)}`,
    );
  }
}
