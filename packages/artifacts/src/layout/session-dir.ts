import { basename, dirname, join, resolve } from "node:path";
import { describeValue, StowageError } from "@stowage/core";
import { parseSessionFileName, SESSION_FILE_EXTENSION } from "./session-file-name.js";

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function reject(sessionFile: unknown, problem: string): never {
  throw new StowageError(
    "INVALID_INPUT",
    `session file ${problem}; expected a path ending in <timestamp>_<sessionId>${SESSION_FILE_EXTENSION}, got ${describeValue(sessionFile)}`,
    { reason: "INVALID_SESSION_FILE" },
  );
}

/**
 * The artifacts directory a session file owns: `…/<timestamp>_<sessionId>.jsonl` owns
 * `…/<timestamp>_<sessionId>/` (absolute). Anything that is not such a file name is rejected
 * with INVALID_INPUT, so a typo never makes a sibling directory (or `..`) an artifacts directory.
 */
export function artifactsDirFor(sessionFile: string): string {
  if (typeof sessionFile !== "string" || sessionFile.length === 0)
    reject(sessionFile, "must be a non-empty path");
  if (CONTROL_CHARACTER.test(sessionFile)) reject(sessionFile, "must not contain control characters or NUL");
  if (sessionFile.endsWith("/") || sessionFile.endsWith("\\"))
    reject(sessionFile, "must name a file, not a directory");
  const name = basename(sessionFile);
  if (!name.endsWith(SESSION_FILE_EXTENSION)) reject(sessionFile, `must end in ${SESSION_FILE_EXTENSION}`);
  if (!parseSessionFileName(name)) {
    reject(
      sessionFile,
      "must be named <timestamp>_<sessionId>, both parts of letters, digits and . _ : @ - (no _ in the timestamp)",
    );
  }
  return join(dirname(resolve(sessionFile)), name.slice(0, -SESSION_FILE_EXTENSION.length));
}
