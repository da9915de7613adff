// The `stowage` command line. Only commander and the command definitions load at start: each
// command imports what it works with when it runs, so `stowage --help` stays fast.
import { readFileSync } from "node:fs";
import { envFlag, errorBody, StowageError } from "@stowage/core";
import { Command, CommanderError } from "commander";
import { artifactCommand } from "./artifact-command.js";
import { auditCommand } from "./audit-command.js";
import { blobCommand } from "./blob-commands.js";
import type { CommandContext } from "./context.js";
import { demoCommand } from "./demo-command.js";
import { expiringCommand } from "./expiring-command.js";
import { keysCommand } from "./keys-command.js";
import { mcpCommand } from "./mcp-command.js";
import { serveCommand } from "./serve-command.js";
import { sessionCommand } from "./session-commands.js";
import { trashCommand } from "./trash-command.js";
import { uploadCommand } from "./upload-command.js";
import { uploadsCommand } from "./uploads-command.js";
import { isUsageError } from "./usage-error.js";

/**
 * Exit statuses: 0 done; 1 the operation was refused or failed; 2 the command line was wrong
 * (commander's refusals, and the commands' own checks of it: option values, `--user`/`--org`,
 * options that exclude each other).
 */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** This package's version (`src/cli/` and `dist/cli/` are both two levels below package.json). */
function version(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return manifest.version;
}

/** Commander's output and exits go through the context, on every command of the tree. */
function configureTree(command: Command, context: CommandContext): void {
  command
    .exitOverride()
    .showHelpAfterError('(add "--help" for usage)')
    .configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
    });
  for (const sub of command.commands) configureTree(sub, context);
}

/** The `stowage` program: the one list of its commands. */
export function createProgram(context: CommandContext): Command {
  const program = new Command("stowage")
    .description(
      "Stowage: storage for AI-agent sessions. Works on a data directory (./.stowage/ unless " +
        "STOWAGE_DATA_DIR) with embedded defaults, or on PostgreSQL and S3 when configured.",
    )
    .version(version(), "-V, --version", "print the version")
    .option("--debug", "print the stack of an unexpected error (or set STOWAGE_DEBUG=1)")
    .addCommand(serveCommand(context))
    .addCommand(demoCommand(context))
    .addCommand(blobCommand(context))
    .addCommand(sessionCommand(context))
    .addCommand(artifactCommand(context))
    .addCommand(uploadCommand(context))
    .addCommand(uploadsCommand(context))
    .addCommand(keysCommand(context))
    .addCommand(auditCommand(context))
    .addCommand(expiringCommand(context))
    .addCommand(trashCommand(context))
    .addCommand(mcpCommand(context));
  configureTree(program, context);
  return program;
}

/** Whether `flag` is given: before a `--` that ends the options. */
function hasFlag(argv: readonly string[], flag: string): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes(flag);
}

/** `--debug`, or a true `STOWAGE_DEBUG`; a malformed value reads as off (this runs while failing). */
function wantsStack(argv: readonly string[], env: CommandContext["env"]): boolean {
  if (hasFlag(argv, "--debug")) return true;
  try {
    return envFlag(env, "STOWAGE_DEBUG") === true;
  } catch {
    return false;
  }
}

/**
 * Runs `stowage <argv>` and returns its exit status. A failed command prints `error: <message>`
 * on stderr (with `--json`: core's wire format, `{ "error", "code", "reason"?, "details"? }`). An
 * unexpected error (not a StowageError: a bug) prints its message only, and its stack with
 * `--debug` or `STOWAGE_DEBUG=1`.
 */
export async function main(argv: string[], context: CommandContext): Promise<number> {
  try {
    await createProgram(context).parseAsync(argv, { from: "user" });
    return 0;
  } catch (err) {
    // Commander has printed its message (or the help) already.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : EXIT_USAGE;
    const expected = StowageError.is(err);
    const json = hasFlag(argv, "--json");
    if (json) context.stderr.write(`${JSON.stringify(errorBody(err))}\n`);
    else if (expected) context.note(`error: ${err.message}`);
    else context.note(`error: ${err instanceof Error ? err.message : String(err)}`);
    if (!expected && err instanceof Error && wantsStack(argv, context.env)) context.note(err.stack ?? "");
    else if (!expected && !json) context.note("(unexpected: --debug or STOWAGE_DEBUG=1 prints its stack)");
    if (!isUsageError(err)) return EXIT_FAILURE;
    // As commander's own refusals end.
    if (!json) context.note('(add "--help" for usage)');
    return EXIT_USAGE;
  }
}
