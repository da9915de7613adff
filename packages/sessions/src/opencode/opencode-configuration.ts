import { homedir } from "node:os";
import { join } from "node:path";
import { withoutJsoncSecrets } from "../configuration/config-file-secrets.js";
import type { ConfigurationLayout, WithoutSecrets } from "../configuration/configuration-layout.js";

/** OpenCode's `opencode.json(c)` is vetted for secrets; its markdown agents and commands hold none of theirs. */
function withoutOpencodeSecrets(name: string, bytes: Uint8Array): WithoutSecrets {
  return name === "opencode.json" || name === "opencode.jsonc"
    ? withoutJsoncSecrets(bytes)
    : { bytes, leftOut: [] };
}

/** The directories of markdown agents, commands and modes, and of plugins, that OpenCode reads from a config directory. */
const CONFIG_DIRECTORIES = ["agent", "agents", "command", "commands", "mode", "modes", "plugin", "plugins"];

/**
 * In OpenCode's config directory (`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`):
 * `opencode.json(c)` (providers, MCP servers, agents, instructions), the user's rules
 * (`AGENTS.md`), and its agents, commands, modes and plugins. Never `auth.json` (in the data
 * directory: the logins) nor the caches.
 */
export const OPENCODE_USER_CONFIGURATION: ConfigurationLayout = {
  withoutSecrets: withoutOpencodeSecrets,
  files: ["opencode.json", "opencode.jsonc", "AGENTS.md"],
  directories: CONFIG_DIRECTORIES,
};

/** In the working directory: `opencode.json(c)`, `AGENTS.md` and `.opencode/` with its agents, commands, modes and plugins. */
export const OPENCODE_PROJECT_CONFIGURATION: ConfigurationLayout = {
  withoutSecrets: withoutOpencodeSecrets,
  files: [
    "opencode.json",
    "opencode.jsonc",
    "AGENTS.md",
    ".opencode/opencode.json",
    ".opencode/opencode.jsonc",
  ],
  directories: CONFIG_DIRECTORIES.map((directory) => `.opencode/${directory}`),
};

/**
 * The config directory OpenCode run with `env` (laid over this process's) reads:
 * `$XDG_CONFIG_HOME/opencode`, else `$HOME/.config/opencode` (as xdg-basedir, which OpenCode uses).
 */
export function opencodeConfigDir(env: NodeJS.ProcessEnv | undefined): string {
  const merged = { ...process.env, ...env };
  if (merged.XDG_CONFIG_HOME) return join(merged.XDG_CONFIG_HOME, "opencode");
  return join(merged.HOME ?? homedir(), ".config", "opencode");
}
