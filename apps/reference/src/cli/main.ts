// The `stowage` command line.
import { StowageError } from "@stowage/core";
import { artifactCommand } from "./artifact-command.js";
import { blobCommand } from "./blob-commands.js";
import { type Command, runCommand } from "./command.js";
import { demoCommand } from "./demo-command.js";
import { keysCommand } from "./keys-command.js";
import { serveCommand } from "./serve-command.js";
import { sessionCommand } from "./session-commands.js";
import { uploadCommand } from "./upload-command.js";

export const stowageCommand: Command = {
  name: "stowage",
  summary: "Stowage reference app: storage for AI-agent sessions, on embedded defaults (./.stowage/)",
  subcommands: [
    serveCommand,
    demoCommand,
    blobCommand,
    sessionCommand,
    artifactCommand,
    uploadCommand,
    keysCommand,
  ],
};

export async function main(argv: string[]): Promise<number> {
  try {
    await runCommand(stowageCommand, argv, {
      out: (line) => process.stdout.write(`${line}\n`),
      env: process.env,
      // pnpm runs scripts inside the package; INIT_CWD is where the user typed the command.
      cwd: process.env.INIT_CWD ?? process.cwd(),
    });
    return 0;
  } catch (err) {
    process.stderr.write(
      `error: ${StowageError.is(err) ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return 1;
  }
}
