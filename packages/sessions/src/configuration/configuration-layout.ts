import { pathSegmentProblem } from "@stowage/core";

/**
 * The user's and the project's configuration of an agent, captured only on request
 * (`withConfig`): what a resumed run in a new container needs to behave as before, but not the
 * session's own state. Entries under `~user/` go to the agent's user configuration directory
 * (Claude Code's config directory, `$CODEX_HOME`, OpenCode's `~/.config/opencode`), those under
 * `~project/` to the working directory.
 */
export const USER_CONFIG_ENTRY_PREFIX = "~user/";
export const PROJECT_CONFIG_ENTRY_PREFIX = "~project/";
/**
 * Claude Code, captured on request (`withMemory`): the project's auto-memory, kept in the
 * project's directory of the config directory (`projects/<key>/memory/`), restored under the
 * key the session is restored to. The project's, shared by its sessions: restored where absent.
 */
export const PROJECT_DIR_ENTRY_PREFIX = "~project-dir/";

/** What leaving secrets out of a configuration file gave. */
export type WithoutSecrets =
  | { bytes: Uint8Array; leftOut: string[] }
  /** Not parseable where a format is expected: it cannot be vetted, so it is not captured. */
  | { refused: string };

/** One place configuration is read from: single files, and directories taken whole. */
export interface ConfigurationLayout {
  files: readonly string[];
  directories: readonly string[];
  /** Paths below one of `directories` never taken, with the reason (the CLI's own installs). */
  skipped?: Readonly<Record<string, string>>;
  /** The file `name` (its last segment) without its secrets; a file with none byte for byte. */
  withoutSecrets: (name: string, bytes: Uint8Array) => WithoutSecrets;
}

/** Directories inside configuration that are never taken: a marketplace's git clone can be fetched again. */
export const SKIPPED_CONFIG_DIRECTORY_NAMES: ReadonlySet<string> = new Set([".git", "node_modules"]);

/** An environment variable, header or field whose name says it holds a secret. */
export const SECRET_NAME = /key|token|secret|passw|credential|auth|cookie|bearer/i;

/**
 * Why `rest` (an entry's path after its prefix) is not a configuration path of `layout`, or
 * undefined when it is: one of its files, or a file somewhere below one of its directories
 * (never below one it skips).
 */
export function configurationPathProblem(rest: string, layout: ConfigurationLayout): string | undefined {
  const expected = `must be one of ${layout.files.join(", ")} or a file under ${layout.directories.join("/, ")}/`;
  const segments = rest.split("/");
  if (segments.some((segment) => pathSegmentProblem(segment) !== undefined)) return expected;
  if (segments.some((segment) => SKIPPED_CONFIG_DIRECTORY_NAMES.has(segment))) return expected;
  if (Object.keys(layout.skipped ?? {}).some((skipped) => `${rest}/`.startsWith(`${skipped}/`))) {
    return expected;
  }
  if (layout.files.includes(rest)) return undefined;
  return layout.directories.some((directory) => rest.startsWith(`${directory}/`)) ? undefined : expected;
}
