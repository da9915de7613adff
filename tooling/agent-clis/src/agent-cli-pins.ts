/** The agents whose real CLIs the end-to-end tests run. */
export type AgentCliName = "claude-code" | "codex" | "opencode";

/** Where a pinned CLI comes from and how it starts, relative to its install directory. */
export interface AgentCliPin {
  /** The npm package installed. */
  readonly packageName: string;
  /** The exact version tested here; change it only together with a green run of the int tests. */
  readonly version: string;
  /** The executable, relative to the install prefix. */
  readonly command: string;
  /** Whether `command` is a Node script (started with this process's `node`) rather than a native binary. */
  readonly node: boolean;
}

/**
 * The pinned versions. Claude Code and OpenCode ship a native binary in a platform package; we
 * start it directly because npm 11 may hold back the wrapper's postinstall that would link it.
 * Codex's wrapper script picks its platform binary and puts its bundled tools on PATH, so it
 * starts through Node.
 */
export const AGENT_CLI_PINS: Readonly<Record<AgentCliName, AgentCliPin>> = {
  "claude-code": {
    packageName: "@anthropic-ai/claude-code",
    version: "2.1.330",
    command: "node_modules/@anthropic-ai/claude-code-linux-x64/claude",
    node: false,
  },
  codex: {
    packageName: "@openai/codex",
    version: "0.169.0",
    command: "node_modules/@openai/codex/bin/codex.js",
    node: true,
  },
  opencode: {
    packageName: "opencode-ai",
    version: "1.18.33",
    command: "node_modules/opencode-linux-x64/bin/opencode",
    node: false,
  },
};
