import type { SessionAgent } from "../agents/session-agent.js";
import { CLAUDE_JSON_MCP_ENTRY } from "../claude/claude-json-mcp.js";
import {
  PROJECT_CONFIGURATION,
  PROJECT_MEMORY,
  USER_CONFIGURATION,
} from "../claude/session-configuration.js";
import { CODEX_PROJECT_CONFIGURATION, CODEX_USER_CONFIGURATION } from "../codex/codex-configuration.js";
import {
  OPENCODE_PROJECT_CONFIGURATION,
  OPENCODE_USER_CONFIGURATION,
} from "../opencode/opencode-configuration.js";
import {
  type ConfigurationLayout,
  configurationPathProblem,
  PROJECT_CONFIG_ENTRY_PREFIX,
  PROJECT_DIR_ENTRY_PREFIX,
  USER_CONFIG_ENTRY_PREFIX,
} from "./configuration-layout.js";

/** Each agent's configuration captured on request: the user's (`~user/`) and the project's (`~project/`). */
export const CONFIGURATION_BY_AGENT: Readonly<
  Record<SessionAgent, { user: ConfigurationLayout; project: ConfigurationLayout }>
> = {
  "claude-code": { user: USER_CONFIGURATION, project: PROJECT_CONFIGURATION },
  codex: { user: CODEX_USER_CONFIGURATION, project: CODEX_PROJECT_CONFIGURATION },
  opencode: { user: OPENCODE_USER_CONFIGURATION, project: OPENCODE_PROJECT_CONFIGURATION },
};

/** The prefixes of entries restored as configuration: never over a file there. */
const CONFIGURATION_PREFIXES = [
  USER_CONFIG_ENTRY_PREFIX,
  PROJECT_CONFIG_ENTRY_PREFIX,
  PROJECT_DIR_ENTRY_PREFIX,
  CLAUDE_JSON_MCP_ENTRY.slice(0, CLAUDE_JSON_MCP_ENTRY.indexOf("/") + 1),
];

/**
 * Whether an archive entry is configuration (captured with `withConfig`, or Claude Code's
 * project memory with `withMemory`) rather than the session's: restored where absent, kept where present.
 */
export function isConfigurationEntry(path: string): boolean {
  return CONFIGURATION_PREFIXES.some((prefix) => path.startsWith(prefix));
}

/**
 * Why `path`, a configuration entry, is not one of `agent`'s configuration paths (only where the
 * agent reads its configuration), or undefined when it is.
 */
export function configurationEntryProblem(path: string, agent: SessionAgent): string | undefined {
  const claudeOnly = `is Claude Code's configuration, not ${agent}'s`;
  if (path.startsWith(PROJECT_DIR_ENTRY_PREFIX)) {
    if (agent !== "claude-code") return claudeOnly;
    return configurationPathProblem(path.slice(PROJECT_DIR_ENTRY_PREFIX.length), PROJECT_MEMORY);
  }
  if (!path.startsWith(USER_CONFIG_ENTRY_PREFIX) && !path.startsWith(PROJECT_CONFIG_ENTRY_PREFIX)) {
    if (agent !== "claude-code") return claudeOnly;
    return path === CLAUDE_JSON_MCP_ENTRY ? undefined : `must be "${CLAUDE_JSON_MCP_ENTRY}"`;
  }
  const { user, project } = CONFIGURATION_BY_AGENT[agent];
  return path.startsWith(USER_CONFIG_ENTRY_PREFIX)
    ? configurationPathProblem(path.slice(USER_CONFIG_ENTRY_PREFIX.length), user)
    : configurationPathProblem(path.slice(PROJECT_CONFIG_ENTRY_PREFIX.length), project);
}
