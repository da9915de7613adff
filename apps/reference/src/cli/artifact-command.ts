import { StowageError } from "@stowage/core";
import type { Command } from "./command.js";
import { withServices } from "./context.js";

function integer(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^\d{1,15}$/.test(value)) {
    throw new StowageError("INVALID_INPUT", `--${name} must be a non-negative integer, got ${String(value)}`);
  }
  return Number(value);
}

export const artifactCommand: Command = {
  name: "artifact",
  summary: "Read session artifacts by their artifact:// and agent:// URLs",
  subcommands: [
    {
      name: "read",
      summary: "Print an artifact://<id> or agent://<id>[/path|?q=query] of a session",
      args: "<url>",
      options: {
        session: { type: "string", placeholder: "id", description: "the agent session (required)" },
        offset: { type: "string", placeholder: "line", description: "first line to print (plain reads)" },
        limit: { type: "string", placeholder: "lines", description: "lines to print (plain reads)" },
      },
      async run({ values, positionals }, context) {
        const url = positionals[0];
        if (!url) throw new StowageError("INVALID_INPUT", "give an artifact:// or agent:// URL");
        if (typeof values.session !== "string")
          throw new StowageError("INVALID_INPUT", "--session is required");
        const offset = integer(values.offset, "offset");
        const limit = integer(values.limit, "limit");
        await withServices(context, async (services) => {
          const session = await services.agentSessions.get(values.session as string);
          const read = await session.router.read(url, {
            ...(offset === undefined ? {} : { offset }),
            ...(limit === undefined ? {} : { limit }),
          });
          context.out(read.text);
          if (read.lines?.hasMore) context.out(`… more lines after ${read.lines.last}`);
        });
      },
    },
  ],
};
