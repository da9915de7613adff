import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { AgentCli } from "./install-agent-cli.js";
import { type ProcessResult, runProcess } from "./run-process.js";
import { agentRunReport } from "./run-report.js";

/** What every runner takes. */
export interface AgentRunOptions {
  /**
   * The installed CLI ({@link installAgentCli}). A CLI that is not ready makes the run throw: a
   * suite skips with `describe.skipIf(!cli.ready)` and never gets here.
   */
  cli: AgentCli;
  /** The mock model server's URL (`MockModelServer.url`). */
  baseUrl: string;
  /** The run's `HOME`: its "container". Deleting it wipes every file the agent wrote. */
  home: string;
  /** The working directory of the session. */
  cwd: string;
  prompt: string;
  /** A session id to resume instead of starting a new session. */
  resume?: string;
  /** More arguments for the CLI, after the runner's own. */
  extraArgs?: readonly string[];
  /** More environment variables; they win over the runner's. */
  env?: NodeJS.ProcessEnv;
  /** Default 120 000 ms; the CLI and everything it started are killed then. */
  timeoutMs?: number;
}

/** How a run ended, with the session id the CLI reported (`undefined` when it reported none). */
export interface AgentRunResult extends ProcessResult {
  sessionId: string | undefined;
  /** Wall time from start to exit (or to the kill at the timeout). */
  durationMs: number;
  /**
   * The message for an assertion on `code` (`expect(run.code, run.report).toBe(0)`): one line
   * when the run exited 0; otherwise how it ended, its stderr and stdout tails and the tails of
   * the newest `*.log` files under its HOME.
   */
  report: string;
}

/**
 * How long one run of a real agent CLI may take before it is killed: a bound for hangs, never
 * reached by a run that works. A run takes 5–15 s on a quiet machine, about 7 s of CPU (an
 * OpenCode run starts Bun with its bundle and migrates a fresh database); in CI ~20 processes
 * share 2 cores, and a run of 13 s took more than 120 s there.
 */
export const REAL_CLI_RUN_TIMEOUT_MS = 300_000;

/**
 * The environment of a run: only what a process needs to start, then `HOME`, then the runner's
 * and the caller's variables. Nothing else of the test's environment leaks in, so a developer's
 * own agent settings (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, API keys) cannot reach the run.
 */
export function agentEnv(home: string, ...layers: (NodeJS.ProcessEnv | undefined)[]): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: process.env.LANG ?? "C.UTF-8",
    HOME: home,
    // Some CLIs put caches and data under XDG paths; inside HOME they are wiped with it.
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_CACHE_HOME: `${home}/.cache`,
    XDG_DATA_HOME: `${home}/.local/share`,
    XDG_STATE_HOME: `${home}/.local/state`,
    // A container has its own /tmp. OpenCode shares `<tmpdir>/opencode` between its processes, and
    // `opencode run` leaves a 5.5 MB native library in the temp directory each time: inside HOME,
    // runs of parallel tests cannot meet there, and wiping the container removes it.
    TMPDIR: containerTempDirectory(home),
  };
  return Object.assign(base, ...layers.filter(Boolean));
}

/** `<home>/tmp`, created when missing (a CLI fails to start without its temp directory). */
function containerTempDirectory(home: string): string {
  const directory = join(home, "tmp");
  mkdirSync(directory, { recursive: true });
  return directory;
}

/** Runs the CLI with `args` after its own leading arguments, bounded by the run's timeout. */
export async function runAgentCli(
  options: AgentRunOptions,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  parseSessionId: (result: ProcessResult) => string | undefined,
): Promise<AgentRunResult> {
  const { cli } = options;
  if (!cli.ready) throw new Error(`agent CLI ${cli.name} is not installed: ${cli.reason}`);
  const started = performance.now();
  const result = await runProcess(cli.command, [...cli.args, ...args, ...(options.extraArgs ?? [])], {
    cwd: options.cwd,
    env: agentEnv(options.home, env, options.env),
    timeoutMs: options.timeoutMs ?? REAL_CLI_RUN_TIMEOUT_MS,
  });
  const durationMs = Math.round(performance.now() - started);
  const report = await agentRunReport(cli.name, result, durationMs, options.home);
  return { ...result, sessionId: parseSessionId(result), durationMs, report };
}
