import { setFlagsFromString } from "node:v8";

/** Commands that serve until stopped: their embedded database runs long enough for optimized code to pay. */
const SERVING_COMMANDS = new Set(["serve", "demo", "mcp"]);

/** Whether `stowage <argv>` runs once and exits (everything but `serve`, `demo` and `mcp`). */
export function runsOnce(argv: readonly string[]): boolean {
  // The command is the first word that is not an option (the one global option, --debug, takes no value).
  const command = argv.find((arg) => !arg.startsWith("-"));
  return command === undefined || !SERVING_COMMANDS.has(command);
}

/**
 * For a command that runs once and exits, has V8 compile WebAssembly with its baseline compiler
 * only (Liftoff), never recompiling hot functions with its optimizing one (TurboFan). The embedded
 * database (PGlite) is WebAssembly of megabytes; a one-off command runs a few queries on it, and
 * optimizing it in the background cost more than it saved: `stowage session stored` on an
 * embedded database took 2.0 s and 3.2 s of CPU, 1.6 s and 2.2 s with this; `session restore` of a
 * 13.6 MB session 2.4 s against 2.0 s (2026-12-02, a quiet 2-core machine). What the code computes
 * is the same at either tier. Process-wide, so only the `stowage` process itself sets it, before
 * any module is compiled; `serve`, `demo` and `mcp` keep V8's default.
 */
export function compileWasmForOneRun(argv: readonly string[]): void {
  if (runsOnce(argv)) setFlagsFromString("--liftoff-only");
}
