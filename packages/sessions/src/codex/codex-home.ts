import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { describeValue, StowageError } from "@stowage/core";

/** `$CODEX_HOME` when set, else `~/.codex`, as the Codex CLI resolves it. */
export function defaultCodexHome(): string {
  const fromEnv = process.env.CODEX_HOME;
  return fromEnv ? resolve(fromEnv) : join(homedir(), ".codex");
}

/** `codexHome` checked and resolved, or the default. */
export function resolveCodexHome(codexHome: unknown): string {
  if (codexHome === undefined) return defaultCodexHome();
  if (typeof codexHome !== "string" || codexHome === "") {
    throw new StowageError(
      "INVALID_INPUT",
      `codexHome must be a non-empty path, got ${describeValue(codexHome)}`,
    );
  }
  return resolve(codexHome);
}
