import { spawn } from "node:child_process";

/** How a bounded child process ended and what it printed. */
export interface ProcessResult {
  /** The exit code; `null` when a signal ended it (a timeout included). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** True when the timeout killed it. */
  timedOut: boolean;
}

/** A child process to run to completion. */
export interface ProcessOptions {
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** Killed (SIGKILL, whole process group) after this many milliseconds. */
  timeoutMs: number;
}

/** How long the helpers of a CLI that has exited may keep its output pipes open. */
const EXITED_GROUP_GRACE_MS = 5_000;

/**
 * Runs `command args` with stdin closed, collecting its output, and kills its whole process
 * group at the timeout: the agent CLIs start helpers (MCP servers, language servers) that would
 * otherwise outlive a test.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: ProcessOptions,
): Promise<ProcessResult> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  let timedOut = false;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const killGroup = () => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, options.timeoutMs);
  // `close` waits for every holder of the output pipes: a helper the CLI started and left running
  // would keep a finished run open until the timeout. Once the CLI itself has exited, what it
  // wrote is already in the pipes; its group gets a moment to finish, then goes.
  let afterExit: NodeJS.Timeout | undefined;
  child.on("exit", () => {
    afterExit = setTimeout(killGroup, EXITED_GROUP_GRACE_MS);
  });
  return new Promise((resolve, reject) => {
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      clearTimeout(afterExit);
      // Helpers the CLI left behind in its group go with it.
      killGroup();
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

/** The environment without the `npm_*` variables a package manager running the tests set for its scripts. */
export function withoutPackageManagerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.toLowerCase().startsWith("npm_")));
}
