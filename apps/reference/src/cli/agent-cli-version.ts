import { execFile } from "node:child_process";
import type { SessionAgent } from "@stowage/sessions";
import { type CommandContext, resolvePath } from "./context.js";
import { type OpencodeCli, onPath } from "./opencode-cli.js";

/** How long `<cli> --version` may take: it prints one line, but a cold start on a loaded machine is slow. */
const AGENT_VERSION_TIMEOUT_MS = 15_000;
/** Most of its output read; a version is one short line. */
const MAX_VERSION_OUTPUT_BYTES = 64 * 1024;

/** The command each agent installs, looked up on PATH when `--agent-cli` is not given. */
const AGENT_COMMANDS: Record<Exclude<SessionAgent, "opencode">, string> = {
  "claude-code": "claude",
  codex: "codex",
};

/** What `<cli> --version` gave: its output, or why there is none (the restore then checks nothing). */
type InstalledAgentVersion = { cli: string; output: string } | { cli?: string; problem: string };

/** The CLI whose version is compared: `--agent-cli`, else the OpenCode CLI in use, else the agent's command on PATH. */
async function agentCli(
  context: CommandContext,
  agent: SessionAgent,
  given: string | undefined,
  opencode: OpencodeCli | undefined,
): Promise<string | undefined> {
  if (given !== undefined) return /[/\\]/.test(given) ? resolvePath(context, given) : given;
  if (agent === "opencode") return opencode?.bin;
  return onPath(context, AGENT_COMMANDS[agent]);
}

/**
 * Runs the installed agent CLI's `--version` (bounded by {@link AGENT_VERSION_TIMEOUT_MS}, its
 * output by 64 KiB, with the user's environment, nothing on stdin) for `restoreSession`'s
 * `agentVersion`. Never fails: a CLI that is missing, fails or hangs is a `problem` to note.
 */
export async function installedAgentVersion(
  context: CommandContext,
  agent: SessionAgent,
  given: string | undefined,
  opencode: OpencodeCli | undefined,
): Promise<InstalledAgentVersion> {
  const cli = await agentCli(context, agent, given, opencode);
  if (cli === undefined) {
    return {
      problem: `no ${agent === "opencode" ? "OpenCode CLI" : AGENT_COMMANDS[agent]} on PATH (give --agent-cli)`,
    };
  }
  return new Promise((resolve) => {
    execFile(
      cli,
      ["--version"],
      {
        env: context.env,
        cwd: context.cwd,
        timeout: AGENT_VERSION_TIMEOUT_MS,
        killSignal: "SIGKILL",
        maxBuffer: MAX_VERSION_OUTPUT_BYTES,
        encoding: "utf8",
        windowsHide: true,
      },
      (err, stdout) => {
        if (err) {
          const why =
            err.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER"
              ? `printed more than ${MAX_VERSION_OUTPUT_BYTES} bytes`
              : err.killed
                ? `gave no answer within ${AGENT_VERSION_TIMEOUT_MS} ms`
                : `failed (${String(err.code ?? err.signal)})`;
          resolve({ cli, problem: `${cli} --version ${why}` });
        } else resolve({ cli, output: stdout });
      },
    );
  });
}
