import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { errnoOf, fromSystemError, StowageError } from "@stowage/core";

/**
 * Names in `dir`, or null when it does not exist. A file where the directory should be is a
 * CONFLICT (reason `NOT_A_DIRECTORY`).
 */
export async function readDirectoryNames(dir: string, context: string): Promise<string[] | null> {
  try {
    return await readdir(dir);
  } catch (err) {
    return missingOrThrow(err, dir, context);
  }
}

/** {@link readDirectoryNames} with each entry's type. */
export async function readDirectoryEntries(dir: string, context: string): Promise<Dirent[] | null> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (err) {
    return missingOrThrow(err, dir, context);
  }
}

function missingOrThrow(err: unknown, dir: string, context: string): null {
  const errno = errnoOf(err);
  if (errno === "ENOENT") return null;
  if (errno === "ENOTDIR") {
    throw new StowageError("CONFLICT", `${context}: ${dir} is not a directory`, {
      cause: err,
      reason: "NOT_A_DIRECTORY",
    });
  }
  throw fromSystemError(err, context);
}

/**
 * Error thrown by `artifact://` and `agent://` reads when the session has no artifacts directory.
 * It names no path: errors travel to clients, and a server's directories are none of theirs.
 */
export function noArtifactsDirectory(): StowageError {
  return new StowageError("NOT_FOUND", "No artifacts directory found", { reason: "NO_ARTIFACTS_DIR" });
}

/** Most ids a NOT_FOUND message lists; `details.available` holds the same capped list. */
export const MAX_LISTED_IDS = 50;

/** `"0, 1, 2"`, cut after {@link MAX_LISTED_IDS} with a count of the rest. */
export function describeAvailable(ids: readonly string[]): string {
  if (ids.length === 0) return "none";
  const shown = ids.slice(0, MAX_LISTED_IDS).join(", ");
  return ids.length > MAX_LISTED_IDS ? `${shown} … and ${ids.length - MAX_LISTED_IDS} more` : shown;
}
