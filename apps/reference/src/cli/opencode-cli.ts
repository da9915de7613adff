import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { StowageError } from "@stowage/core";
import { type CommandContext, resolvePath } from "./context.js";

/** The command OpenCode installs, looked up on PATH when `--opencode` is not given. */
const OPENCODE_COMMAND = "opencode";

/** The OpenCode CLI a command runs, and how it was chosen (said in the output). */
export interface OpencodeCli {
  /** What is run: a path, or a bare command name that the system looks up on PATH. */
  bin: string;
  /** `option`: `--opencode` named it; `PATH`: found on PATH without it. */
  from: "option" | "PATH";
}

/** The executable file `name` names in one of PATH's directories (the user's PATH), if any. */
export async function onPath(context: CommandContext, name: string): Promise<string | undefined> {
  const extensions =
    process.platform === "win32" ? (context.env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  for (const dir of (context.env.PATH ?? "").split(delimiter)) {
    // An empty entry means the current directory to a shell; a command is not taken from there.
    if (dir === "") continue;
    for (const extension of extensions) {
      const candidate = join(dir, name + extension);
      const found = await stat(candidate).then(
        (stats) => stats.isFile(),
        () => false,
      );
      if (
        found &&
        (await access(candidate, constants.X_OK).then(
          () => true,
          () => false,
        ))
      )
        return candidate;
    }
  }
  return undefined;
}

/**
 * The OpenCode CLI of `--opencode` (as a shell takes a command: a bare name is looked up on PATH, a
 * path is the user's), else the `opencode` found on PATH, else undefined.
 */
export function findOpencodeCli(
  context: CommandContext,
  given: string | undefined,
): Promise<OpencodeCli | undefined> {
  return findAgentCommand(context, OPENCODE_COMMAND, given);
}

/**
 * The CLI an option names (a bare name looked up on PATH by the system, a path the user's), else
 * `command` found on PATH, else undefined: how `--opencode` and `--codex` are chosen.
 */
export async function findAgentCommand(
  context: CommandContext,
  command: string,
  given: string | undefined,
): Promise<OpencodeCli | undefined> {
  if (given !== undefined) {
    return { bin: /[/\\]/.test(given) ? resolvePath(context, given) : given, from: "option" };
  }
  const found = await onPath(context, command);
  return found === undefined ? undefined : { bin: found, from: "PATH" };
}

/** The OpenCode CLI, which an OpenCode session cannot be captured or restored without. */
export function requiredOpencodeCli(cli: OpencodeCli | undefined, why: string): OpencodeCli {
  if (cli === undefined) {
    throw new StowageError(
      "INVALID_INPUT",
      `${why} needs the OpenCode CLI, and there is no ${OPENCODE_COMMAND} on PATH: give --opencode <path to the opencode CLI>`,
      { reason: "OPENCODE_CLI_MISSING" },
    );
  }
  return cli;
}

/** How the output names the CLI used. */
export function describeOpencodeCli(cli: OpencodeCli): string {
  return cli.from === "PATH" ? `${cli.bin} (found on PATH)` : cli.bin;
}
