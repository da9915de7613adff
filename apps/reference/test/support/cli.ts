import { PassThrough } from "node:stream";
import { type ChildResult, runChild } from "@stowage/test-support";
import { createProgram } from "../../src/cli/main.js";

/** What a run of the CLI printed. */
export interface CliOutput {
  stdout: string;
  stderr: string;
}

function collect(stream: PassThrough): () => string {
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  return () => Buffer.concat(chunks).toString("utf8");
}

/**
 * Runs `stowage <argv>` in this process with its own directory and environment; resolves with what
 * it printed, or rejects with the command's error (a StowageError, or commander's usage error), so
 * that tests assert on `code` with `expectStowageError`.
 */
export async function stowage(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string | undefined>; stderrIsTTY?: boolean },
): Promise<CliOutput> {
  const stdout = new PassThrough();
  // A terminal, for what draws only on one (progress bars).
  const stderr = Object.assign(new PassThrough(), { isTTY: options.stderrIsTTY === true, columns: 100 });
  const readOut = collect(stdout);
  const readErr = collect(stderr);
  const program = createProgram({
    out: (line) => stdout.write(`${line}\n`),
    note: (line) => stderr.write(`${line}\n`),
    stdout,
    stderr,
    env: options.env,
    cwd: options.cwd,
  });
  await program.parseAsync([...argv], { from: "user" });
  // PassThrough delivers on the next turn.
  await new Promise((resolve) => setImmediate(resolve));
  return { stdout: readOut(), stderr: readErr() };
}

const entries = {
  /** The published `stowage` bin. */
  bin: new URL("../../src/bin.ts", import.meta.url),
  /** What the repository's `pnpm stowage` script runs. */
  workspace: new URL("../../src/workspace-bin.ts", import.meta.url),
};

/**
 * Runs the `stowage` executable as a user does, in a child process started in `cwd` with exactly
 * `env` (plus PATH and HOME), and waits for it. `entry` `workspace`: as the repository's script runs it.
 */
export function spawnStowage(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string | undefined>; entry?: keyof typeof entries },
): Promise<ChildResult> {
  return runChild(entries[options.entry ?? "bin"], argv, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env } as NodeJS.ProcessEnv,
    cwd: options.cwd,
  });
}
