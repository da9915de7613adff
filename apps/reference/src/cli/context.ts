import { isAbsolute, resolve } from "node:path";
import type { Writable } from "node:stream";

/**
 * What a command reads and writes besides its arguments: the tests run the CLI in-process with
 * their own. The requested data goes to stdout and nothing else does; notes, progress and errors
 * go to stderr, so that `stowage … | jq` and `$(stowage keys create …)` get the value alone.
 */
export interface CommandContext {
  /** One line of the requested data, to stdout. */
  out(line: string): void;
  /** One line of a note for the person at the terminal, to stderr. */
  note(line: string): void;
  /** stdout as a stream, for bytes (`blob get` without `--out`). */
  stdout: Writable;
  /** stderr as a stream, for progress bars (drawn only where it is a terminal). */
  stderr: Writable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** The user's directory: every relative path a user gives is resolved against it. */
  cwd: string;
}

/** A path the user gave, resolved against the user's directory (not the process's). */
export function resolvePath(context: CommandContext, path: string): string {
  return isAbsolute(path) ? path : resolve(context.cwd, path);
}
