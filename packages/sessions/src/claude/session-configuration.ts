import {
  type ConfigurationLayout,
  SECRET_NAME,
  type WithoutSecrets,
} from "../configuration/configuration-layout.js";

/**
 * In the config directory: settings, the user's memory, commands, subagents, skills, output
 * styles and installed plugins (without `plugins/store/`, a built-in plugin's telemetry queue).
 * Never `.credentials.json`, `.claude.json` (the install's state and its OAuth account or API key)
 * or anything machine-local.
 */
export const USER_CONFIGURATION: ConfigurationLayout = {
  withoutSecrets: withoutClaudeSecrets,
  files: [
    "settings.json",
    "CLAUDE.md",
    "keybindings.json",
    "plugins/installed_plugins.json",
    "plugins/known_marketplaces.json",
  ],
  directories: ["commands", "agents", "skills", "output-styles", "plugins/marketplaces", "plugins/cache"],
};

/** In the working directory: the project's MCP servers, memory, settings, commands, subagents, skills. */
export const PROJECT_CONFIGURATION: ConfigurationLayout = {
  withoutSecrets: withoutClaudeSecrets,
  files: [
    ".mcp.json",
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/settings.json",
    ".claude/settings.local.json",
  ],
  directories: [".claude/commands", ".claude/agents", ".claude/skills", ".claude/output-styles"],
};

/** The JSON configuration files whose `env` and `headers` maps may hold secrets. */
const JSON_WITH_SECRETS = new Set(["settings.json", "settings.local.json", ".mcp.json"]);

/**
 * `bytes` of the configuration file `name` without secrets: in settings files the `env`
 * entries, in `.mcp.json` each server's `env` and `headers` entries, whose names look like a key,
 * token, secret, password, credential or auth; `leftOut` names each one removed (as
 * `env.ANTHROPIC_API_KEY`, `mcpServers.github.headers.Authorization`). A file with none is
 * returned as it was, byte for byte; one with some is written again as JSON (2-space indent).
 */
export function withoutClaudeSecrets(name: string, bytes: Uint8Array): WithoutSecrets {
  if (!JSON_WITH_SECRETS.has(name)) return { bytes, leftOut: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return { refused: "not JSON, so its secrets cannot be left out" };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { refused: "not a JSON object, so its secrets cannot be left out" };
  }
  const leftOut: string[] = [];
  const strip = (holder: unknown, field: string, where: string) => {
    const map = (holder as Record<string, unknown> | null)?.[field];
    if (typeof map !== "object" || map === null || Array.isArray(map)) return;
    for (const key of Object.keys(map)) {
      if (field === "headers" || SECRET_NAME.test(key)) {
        delete (map as Record<string, unknown>)[key];
        leftOut.push(`${where}${field}.${key}`);
      }
    }
  };
  const record = parsed as Record<string, unknown>;
  if (name === ".mcp.json") {
    const servers = record.mcpServers;
    if (typeof servers === "object" && servers !== null) {
      for (const [server, config] of Object.entries(servers)) {
        strip(config, "env", `mcpServers.${server}.`);
        strip(config, "headers", `mcpServers.${server}.`);
      }
    }
  } else {
    strip(record, "env", "");
  }
  if (leftOut.length === 0) return { bytes, leftOut };
  return { bytes: new TextEncoder().encode(`${JSON.stringify(record, null, 2)}\n`), leftOut };
}

/** Below the project's directory in the config directory: its auto-memory (`withMemory`). */
export const PROJECT_MEMORY: ConfigurationLayout = {
  withoutSecrets: (_name, bytes) => ({ bytes, leftOut: [] }),
  files: [],
  directories: ["memory"],
};
