import { join } from "node:path";
import { StowageError } from "@stowage/core";
import { Command, Option } from "commander";
import { type CommandContext, resolvePath } from "./context.js";
import { jsonOption } from "./output.js";
import {
  addPrincipalOptions,
  type PrincipalOptions,
  principalFrom,
  requiredPrincipal,
} from "./principal-option.js";
import { usageError } from "./usage-error.js";

function lineNumber(name: string) {
  return (value: string): number => {
    if (!/^\d{1,15}$/.test(value)) {
      throw usageError(`--${name} must be a non-negative integer, got ${value}`);
    }
    return Number(value);
  };
}

interface ReadOptions extends PrincipalOptions {
  session?: string;
  dir?: string;
  offset?: number;
  limit?: number;
  json?: boolean;
}

/**
 * The router of what `--session` (with `--user`/`--org`) or `--dir` names: a session's artifacts
 * in the data directory, or an artifacts directory a run reported (a run without a session file
 * writes its subagents' outputs to a temporary one).
 */
async function routerFor(context: CommandContext, options: ReadOptions) {
  if ((options.session === undefined) === (options.dir === undefined)) {
    throw usageError(
      "give --session <id> (with --user or --org) or --dir <artifacts directory>, one of them",
    );
  }
  if (options.dir !== undefined) {
    if (principalFrom(options) !== undefined) {
      throw usageError("--dir reads a directory, not a principal's session: drop --user/--org");
    }
    const { createArtifactStore, createInternalUrlRouter } = await import("@stowage/artifacts");
    const artifacts = createArtifactStore({ dir: resolvePath(context, options.dir) });
    return createInternalUrlRouter({ artifacts });
  }
  const principal = requiredPrincipal(options);
  // Session files are all this needs: no database, so it works beside a running server.
  const { dataDirFrom } = await import("../config.js");
  const { AGENT_SESSIONS_DIR } = await import("../shared-store.js");
  const { agentSessionsOf } = await import("@stowage/tenancy/shared");
  // Below the data directory as the server opens them: a link planted in the layout is refused.
  const dataDir = dataDirFrom(context.env, context.cwd);
  const sessions = agentSessionsOf(join(dataDir, AGENT_SESSIONS_DIR), principal);
  try {
    return (await sessions.get(options.session as string)).router;
  } catch (err) {
    if (!StowageError.is(err, "NOT_FOUND")) throw err;
    // Run from another directory, the data directory is another one: say which was looked in.
    throw new StowageError("NOT_FOUND", `${err.message} in the data directory ${dataDir}`, {
      cause: err,
      ...(err.reason === undefined ? {} : { reason: err.reason }),
      ...(err.details === undefined ? {} : { details: err.details }),
    });
  }
}

function readCommand(context: CommandContext): Command {
  return addPrincipalOptions(
    new Command("read").description(
      "Print an artifact://<id> or agent://<id>[/path|?q=query] of a session, or of a run's artifacts directory (stdout has the content alone)",
    ),
  )
    .argument("<url>", "artifact://<id> or agent://<id>[/path|?q=query]")
    .option("--session <id>", "the agent session (with --user or --org)")
    .option(
      "--dir <dir>",
      "instead of a session: an artifacts directory, such as the temporary one a run without a session file reports",
    )
    .addOption(
      new Option("--offset <line>", "first line to print (plain reads, 1-based)").argParser(
        lineNumber("offset"),
      ),
    )
    .addOption(new Option("--limit <lines>", "lines to print (plain reads)").argParser(lineNumber("limit")))
    .addOption(jsonOption())
    .action(async (url: string, options: ReadOptions) => {
      const router = await routerFor(context, options);
      const read = await router.read(url, {
        ...(options.offset === undefined ? {} : { offset: options.offset }),
        ...(options.limit === undefined ? {} : { limit: options.limit }),
      });
      if (options.json) {
        context.out(JSON.stringify(read, null, 2));
        return;
      }
      context.stdout.write(read.text.endsWith("\n") || read.text === "" ? read.text : `${read.text}\n`);
      if (read.lines?.hasMore)
        context.note(`… more lines after line ${read.lines.last} (--offset ${read.lines.last + 1})`);
    });
}

export function artifactCommand(context: CommandContext): Command {
  return new Command("artifact")
    .description("Read session artifacts by their artifact:// and agent:// URLs")
    .addCommand(readCommand(context));
}
