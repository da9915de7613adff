import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AgentRunOptions,
  type AgentRunResult,
  agentEnv,
  REAL_CLI_RUN_TIMEOUT_MS,
  runAgentCli,
} from "./agent-run.js";
import type { AgentCli } from "./install-agent-cli.js";
import { runProcess } from "./run-process.js";

/** The project configuration file OpenCode reads from the working directory. */
export const OPENCODE_CONFIG_FILE = "opencode.json";

/**
 * Writes `<cwd>/opencode.json` declaring the chat mock at `baseUrl` as an OpenAI-compatible
 * provider (`mock/mock-model`), with autoupdate and sharing off. Runners call it; a test that
 * runs `opencode export`/`import` itself may too.
 */
export async function writeOpenCodeConfig(cwd: string, baseUrl: string): Promise<void> {
  const config = {
    $schema: "https://opencode.ai/config.json",
    provider: {
      mock: {
        npm: "@ai-sdk/openai-compatible",
        name: "Mock",
        options: { baseURL: `${baseUrl}/v1`, apiKey: "sk-mock" },
        models: { "mock-model": { name: "Mock model" } },
      },
    },
    model: "mock/mock-model",
    small_model: "mock/mock-model",
    autoupdate: false,
    share: "disabled",
  };
  await writeFile(join(cwd, OPENCODE_CONFIG_FILE), `${JSON.stringify(config, null, 2)}\n`);
}

/**
 * The models.dev catalogue OpenCode is given (`OPENCODE_MODELS_PATH`): empty. Without a catalogue
 * file OpenCode falls back to the copy bundled in its binary, every provider and model of
 * models.dev, and builds its provider state from all of it on every `opencode run`: about 3.5 s
 * of the ~10 s of CPU a run took here. The runs use only the mock provider their `opencode.json`
 * declares, which is in no catalogue, so the catalogue changes nothing they send or store.
 */
const OPENCODE_MODELS_FILE = fileURLToPath(new URL("./opencode-models.json", import.meta.url));

/**
 * What OpenCode would fetch from the network on every start, turned off: the models.dev
 * catalogue (a failed fetch costs seconds offline; {@link OPENCODE_MODELS_FILE} replaces it),
 * default plugins (installed from npm), language-server downloads, updates and sharing.
 * `npm_config_offline` makes the install of `@opencode-ai/plugin` into the config directory,
 * which OpenCode starts in the background on every run, fail at once from the empty npm cache
 * instead of asking the registry: the runs are offline, whatever the network does.
 */
const OPENCODE_OFFLINE_ENV = {
  npm_config_offline: "true",
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_MODELS_PATH: OPENCODE_MODELS_FILE,
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_PURE: "1",
};

/**
 * OpenCode is a Bun executable: JavaScriptCore's optimizing compilers (DFG, and FTL above it)
 * recompile its hot functions on background threads, which a run of a few seconds never earns
 * back. Without them an `opencode run` against the mock took 2.7 s of CPU instead of 3.7 (wall
 * 2.4 s instead of 2.7), and a `session list` 1.6 s instead of 2.1 (2026-12-02); the suites start
 * OpenCode about ninety times. What the CLI does is the same at any tier.
 */
const SHORT_RUN_ENV = { BUN_JSC_useDFGJIT: "0" };

/** Everything an OpenCode run of the tests gets beyond {@link agentEnv}'s container. */
const OPENCODE_ENV = { ...OPENCODE_OFFLINE_ENV, ...SHORT_RUN_ENV };

/**
 * The environment an OpenCode run gets with `home` as its HOME: for a test that starts the CLI
 * itself (Stowage's `opencode export`/`import`, `session list`) exactly as the runner does.
 */
export function openCodeEnv(home: string): NodeJS.ProcessEnv {
  return agentEnv(home, OPENCODE_ENV);
}

/** The ids of the sessions OpenCode lists in `home`'s database (`opencode session list --format json`). */
export async function listOpenCodeSessions(options: {
  cli: AgentCli;
  home: string;
  cwd: string;
  timeoutMs?: number;
}): Promise<string[]> {
  const { cli } = options;
  if (!cli.ready) throw new Error(`agent CLI ${cli.name} is not installed: ${cli.reason}`);
  const result = await runProcess(cli.command, [...cli.args, "session", "list", "--format", "json"], {
    cwd: options.cwd,
    env: openCodeEnv(options.home),
    timeoutMs: options.timeoutMs ?? REAL_CLI_RUN_TIMEOUT_MS,
  });
  if (result.code !== 0)
    throw new Error(`opencode session list failed (${result.code}): ${result.stderr.slice(-500)}`);
  // An empty database prints nothing rather than `[]`.
  if (result.stdout.trim() === "") return [];
  const sessions = JSON.parse(result.stdout) as { id: string }[];
  return sessions.map((session) => session.id).sort();
}

/**
 * Runs `opencode run --format json <prompt>` (`--session <id>` to continue) in `cwd` against the
 * chat mock at `baseUrl`. Its sessions land in the SQLite database
 * `<home>/.local/share/opencode/opencode.db`.
 */
export async function runOpenCode(options: AgentRunOptions): Promise<AgentRunResult> {
  await writeOpenCodeConfig(options.cwd, options.baseUrl);
  const args = ["run", "--format", "json"];
  if (options.resume !== undefined) args.push("--session", options.resume);
  args.push(options.prompt);
  return runAgentCli(options, args, OPENCODE_ENV, ({ stdout }) => {
    // Every JSON event of the run names its session.
    for (const line of stdout.split("\n")) {
      try {
        const event = JSON.parse(line) as { sessionID?: unknown };
        if (typeof event.sessionID === "string") return event.sessionID;
      } catch {
        // not an event line
      }
    }
    return undefined;
  });
}
