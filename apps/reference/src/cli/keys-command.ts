import { StowageError } from "@stowage/core";
import type { Command } from "./command.js";
import { withServices } from "./context.js";

export const keysCommand: Command = {
  name: "keys",
  summary: "Issue API keys (only a hash is stored)",
  subcommands: [
    {
      name: "create",
      summary: "Create an API key for a user or an org and print it once",
      options: {
        user: { type: "string", placeholder: "id", description: "the user the key acts for" },
        org: { type: "string", placeholder: "id", description: "the org the key acts for" },
        label: { type: "string", placeholder: "text", description: "a note to recognize the key by" },
      },
      async run({ values }, context) {
        const user = values.user;
        const org = values.org;
        if ((user === undefined) === (org === undefined)) {
          throw new StowageError("INVALID_INPUT", "give exactly one of --user <id> or --org <id>");
        }
        const principal =
          user !== undefined
            ? { kind: "user" as const, id: String(user) }
            : { kind: "org" as const, id: String(org) };
        await withServices(context, async (services) => {
          const issued = await services.apiKeys.issue(principal, {
            ...(typeof values.label === "string" ? { label: values.label } : {}),
          });
          context.out(issued.apiKey);
          context.out(
            `(key ${issued.record.id} for ${principal.kind} ${principal.id}; it is shown only now, only its hash is kept)`,
          );
        });
      },
    },
  ],
};
