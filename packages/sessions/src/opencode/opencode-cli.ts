import { spawn } from "node:child_process";
import { mkdtemp, open, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StowageError, throwIfAborted } from "@stowage/core";
import { assertAgentCliOptions } from "../agents/agent-cli-options.js";

/**
 * How long one `opencode export` or `opencode import` may run by default: five minutes. A bound
 * for hangs: a run takes seconds and about 4 s of CPU (Bun starts OpenCode's bundle), but on a
 * busy 2-core runner one took more than two minutes.
 */
export const DEFAULT_OPENCODE_TIMEOUT_MS = 300_000;

/** How Stowage runs the OpenCode CLI: the caller installs it and says where it is. */
export interface OpencodeCliOptions {
  /** Path to the `opencode` binary (e.g. `node_modules/opencode-linux-x64/bin/opencode`). */
  bin: string;
  /**
   * Environment of the CLI, laid over this process's: `HOME` (or `XDG_DATA_HOME`) says whose
   * database it reads or writes.
   */
  env?: NodeJS.ProcessEnv;
  /** Working directory of the CLI. Default: this process's. */
  cwd?: string;
  /** Milliseconds one run of the CLI may take. Default 300,000 (5 minutes). */
  timeoutMs?: number;
}

/** Throws INVALID_INPUT unless `value` is usable {@link OpencodeCliOptions}. */
export function assertOpencodeCliOptions(value: unknown): asserts value is OpencodeCliOptions {
  assertAgentCliOptions(value, "opencode", {
    message: "an OpenCode session needs opencode: { bin: <path to the opencode CLI> }",
    reason: "OPENCODE_CLI_MISSING",
  });
}

/** How often a run checks that the CLI's output file stays within `maxOutputBytes`. */
const OUTPUT_CHECK_MS = 250;
/** The end of the CLI's stderr kept for the error message. */
const STDERR_KEPT_CHARS = 64 * 1024;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
  stderr: string;
  timedOut: boolean;
  tooMuch: boolean;
}

/** Runs the CLI with its stdout on `out` (a file), until it exits, times out or prints too much. */
function runToExit(
  cli: OpencodeCliOptions,
  args: readonly string[],
  out: { fd: number; path: string },
  options: { maxOutputBytes: number; signal?: AbortSignal },
): Promise<Exit> {
  return new Promise((resolve) => {
    let stderr = "";
    let timedOut = false;
    let tooMuch = false;
    let error: Error | undefined;
    const child = spawn(cli.bin, [...args], {
      env: { ...process.env, ...cli.env },
      ...(cli.cwd === undefined ? {} : { cwd: cli.cwd }),
      stdio: ["ignore", out.fd, "pipe"],
      windowsHide: true,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, cli.timeoutMs ?? DEFAULT_OPENCODE_TIMEOUT_MS);
    const watch = setInterval(() => {
      stat(out.path).then(
        (info) => {
          if (info.size <= options.maxOutputBytes) return;
          tooMuch = true;
          child.kill("SIGKILL");
        },
        () => {},
      );
    }, OUTPUT_CHECK_MS);
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEPT_CHARS);
    });
    child.on("error", (err) => {
      error = err;
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      clearInterval(watch);
      resolve({ code, signal, stderr, timedOut, tooMuch, ...(error ? { error } : {}) });
    });
  });
}

/**
 * Runs the OpenCode CLI with `args` (never through a shell) and returns its stdout, at most
 * `maxOutputBytes` of it. The CLI writes stdout into a private temporary file, not a pipe:
 * OpenCode 1.18 exits before a pipe has taken all it wrote, so a large `opencode export` came
 * through a pipe cut at 64 KiB. A CLI that fails, times out or prints more is UNAVAILABLE
 * (reason `OPENCODE_CLI_FAILED`), with its stderr's end in the message; a failure whose stderr
 * says the session is unknown is NOT_FOUND; a `signal` that fires is ABORTED.
 */
export async function runOpencode(
  cli: OpencodeCliOptions,
  args: readonly string[],
  options: { maxOutputBytes: number; signal?: AbortSignal },
): Promise<Buffer> {
  const context = `opencode ${args[0]}`;
  throwIfAborted(options.signal, context);
  const scratch = await mkdtemp(join(tmpdir(), "stowage-opencode-out-"));
  try {
    const path = join(scratch, "stdout");
    const handle = await open(path, "wx", 0o600);
    let exit: Exit;
    try {
      exit = await runToExit(cli, args, { fd: handle.fd, path }, options);
    } finally {
      await handle.close();
    }
    throwIfAborted(options.signal, context);
    if (exit.error === undefined && exit.code === 0 && !exit.tooMuch) {
      const output = await readFile(path);
      if (output.byteLength <= options.maxOutputBytes) return output;
      exit.tooMuch = true;
    }
    // OpenCode colours its errors; keep the text only.
    const said = exit.stderr
      .replace(/\u001b\[[0-9;]*m/g, "")
      .trim()
      .slice(-500);
    const why = exit.tooMuch
      ? `printed more than ${options.maxOutputBytes} bytes`
      : exit.timedOut
        ? `timed out after ${cli.timeoutMs ?? DEFAULT_OPENCODE_TIMEOUT_MS} ms`
        : (exit.error?.message ?? `exit ${exit.code ?? exit.signal}`);
    const notFound = !exit.tooMuch && !exit.timedOut && /session not found/i.test(said);
    throw new StowageError(
      notFound ? "NOT_FOUND" : "UNAVAILABLE",
      `${context} failed (${why})${said ? `: ${said}` : ""}`,
      {
        ...(exit.error ? { cause: exit.error } : {}),
        ...(notFound ? {} : { reason: "OPENCODE_CLI_FAILED" }),
      },
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
