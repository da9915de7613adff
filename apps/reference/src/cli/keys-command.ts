import { Command } from "commander";
import type { CommandContext } from "./context.js";
import { withStoredData } from "./open.js";
import { jsonOption, printResult } from "./output.js";
import { addPrincipalOptions, type PrincipalOptions, requiredPrincipal } from "./principal-option.js";

function createKeyCommand(context: CommandContext): Command {
  return addPrincipalOptions(
    new Command("create").description(
      "Create an API key for a user or an org and print it once (stdout has the key alone)",
    ),
  )
    .option("--label <text>", "a note to recognize the key by")
    .addOption(jsonOption())
    .action(async (options: PrincipalOptions & { label?: string; json?: boolean }) => {
      const principal = requiredPrincipal(options);
      await withStoredData(context, async ({ apiKeys }) => {
        const issued = await apiKeys.issue(principal, {
          ...(options.label === undefined ? {} : { label: options.label }),
        });
        printResult(context, options.json, { apiKey: issued.apiKey, id: issued.record.id, principal }, () => [
          issued.apiKey,
        ]);
        context.note(
          `key ${issued.record.id} for ${principal.kind} ${principal.id}: it is shown only now, only its hash is kept`,
        );
      });
    });
}

export function keysCommand(context: CommandContext): Command {
  return new Command("keys")
    .description("Issue API keys (only a hash is stored)")
    .addCommand(createKeyCommand(context));
}
