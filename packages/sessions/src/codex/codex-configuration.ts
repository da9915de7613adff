import { withoutTomlSecrets } from "../configuration/config-file-secrets.js";
import type { ConfigurationLayout, WithoutSecrets } from "../configuration/configuration-layout.js";

/** Codex's `config.toml` is vetted for secrets; its markdown and rules files hold none of theirs. */
function withoutCodexSecrets(name: string, bytes: Uint8Array): WithoutSecrets {
  return name === "config.toml" ? withoutTomlSecrets(bytes) : { bytes, leftOut: [] };
}

/**
 * In `$CODEX_HOME`: `config.toml` (MCP servers, model providers, profiles), the user's
 * instructions (`AGENTS.md`, `AGENTS.override.md`), custom prompts, the user's skills (never
 * `skills/.system/`, which the CLI installs at start) and exec-policy rules. Never `auth.json`
 * (the login), the databases, logs or anything else the CLI keeps for itself.
 */
export const CODEX_USER_CONFIGURATION: ConfigurationLayout = {
  withoutSecrets: withoutCodexSecrets,
  files: ["config.toml", "AGENTS.md", "AGENTS.override.md"],
  directories: ["prompts", "skills", "rules"],
  skipped: {
    "skills/.system": "the system skills the CLI installs at start: installed again, never captured",
  },
};

/** In the working directory: the project's instructions and its `.codex/config.toml` (read for a trusted project). */
export const CODEX_PROJECT_CONFIGURATION: ConfigurationLayout = {
  withoutSecrets: withoutCodexSecrets,
  files: ["AGENTS.md", "AGENTS.override.md", ".codex/config.toml"],
  directories: [],
};
