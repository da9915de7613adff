import type { TrashedThing } from "@stowage/tenancy";
import { Command } from "commander";
import type { CommandContext } from "./context.js";
import { withServices } from "./open.js";
import { jsonOption, printResult } from "./output.js";
import { addPrincipalOptions, type PrincipalOptions, requiredPrincipal } from "./principal-option.js";

interface TrashOptions extends PrincipalOptions {
  kind: string;
  json?: boolean;
}

const line = (thing: TrashedThing) =>
  `${thing.purgeAfter}  ${thing.kind}  ${thing.id}  ${thing.bytes} bytes  deleted ${thing.trashedAt} by ${thing.by}`;

/** A subcommand on one thing of the trash: `<id>`, `--kind` (default session), the owner's flags, `--json`. */
function onOneThing(name: string, description: string) {
  return addPrincipalOptions(
    new Command(name)
      .description(description)
      .argument(
        "<id>",
        "the session id (of an upload: <sessionId>/<filename>; of a blob: its SHA-256; of a transcript: <projectKey>/<trashId>)",
      ),
  )
    .option(
      "--kind <kind>",
      "what the id names: session (a deleted session), storedSession (an expired stored session), upload (<sessionId>/<filename>, an upload past retention), blob (a blob garbage collection took; purge gives up your claim to it) or transcript (<projectKey>/<trashId>, what the Agent SDK deleted from your SessionStore)",
      "session",
    )
    .addOption(jsonOption());
}

/**
 * `stowage trash list|restore|purge`: a principal's trash (`--user`/`--org`), as the server's
 * `/trash` routes give it: what was deleted and is kept for its grace period, restored exactly
 * or purged now (its deletion audit rows by `cli`).
 */
export function trashCommand(context: CommandContext): Command {
  const trash = new Command("trash").description(
    "List, restore or purge what a principal deleted that is kept for its grace period",
  );
  trash.addCommand(
    addPrincipalOptions(new Command("list").description("What is in the trash, soonest purged first"))
      .addOption(jsonOption())
      .action(async (options: TrashOptions) => {
        const principal = requiredPrincipal(options);
        await withServices(context, async (services) => {
          const listed = await services.stowage.listTrash(principal);
          printResult(context, options.json, listed, () => [
            ...listed.items.map(line),
            `${listed.items.length} in the trash, ${listed.bytes} bytes`,
          ]);
        });
      }),
  );
  trash.addCommand(
    onOneThing("restore", "Put a deleted session back exactly as it was").action(
      async (id: string, options: TrashOptions) => {
        const principal = requiredPrincipal(options);
        await withServices(context, async (services) => {
          const restored = await services.stowage.restoreFromTrash(principal, options.kind, id);
          printResult(context, options.json, restored, () => [`restored ${restored.kind} ${restored.id}`]);
        });
      },
    ),
  );
  trash.addCommand(
    onOneThing("purge", "Delete a session in the trash now, from every store").action(
      async (id: string, options: TrashOptions) => {
        const principal = requiredPrincipal(options);
        await withServices(context, async (services) => {
          const { sessionId, deleted } = await services.stowage.purgeFromTrash(principal, options.kind, id, {
            by: "cli",
          });
          printResult(context, options.json, { sessionId, ...deleted }, () => [
            `purged session ${sessionId}`,
          ]);
        });
      },
    ),
  );
  return trash;
}
