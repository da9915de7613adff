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

function rotateEncryptionCommand(context: CommandContext): Command {
  return new Command("rotate-encryption")
    .description(
      "Re-wrap every data key under the first key of STOWAGE_ENCRYPTION_KEY (content is not rewritten); then the old key may be dropped",
    )
    .addOption(jsonOption())
    .action(async (options: { json?: boolean }) => {
      await withStoredData(context, async ({ rotateEncryptionKeys }) => {
        const report = await rotateEncryptionKeys();
        printResult(context, options.json, report, () => [
          `${report.rewrapped} data keys re-wrapped under ${report.keyId}, ${report.alreadyCurrent} already were`,
        ]);
      });
    });
}

export function keysCommand(context: CommandContext): Command {
  return new Command("keys")
    .description("Issue API keys (only a hash is stored); rotate the encryption key")
    .addCommand(createKeyCommand(context))
    .addCommand(rotateEncryptionCommand(context));
}
