import type { Stowage } from "@stowage/tenancy";
import type { SweptUpload } from "@stowage/uploads";
import { Command, Option } from "commander";
import type { CommandContext } from "./context.js";
import { withServices } from "./open.js";
import { jsonOption, printResult } from "./output.js";
import { countProgress } from "./progress.js";
import { usageError } from "./usage-error.js";

function positiveNumber(value: string): number {
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number <= 0) {
    throw usageError(`--older-than-days must be a positive number, got ${value}`);
  }
  return number;
}

/**
 * Each swept upload in its owner's deletion audit, by `cli`: a sweep by hand skips the trash (it
 * deletes what the operator named now), never the record of what went.
 */
async function auditSwept(stowage: Stowage, gone: readonly SweptUpload[], olderThanDays: number) {
  // The sweep calls this with one session's uploads at a time: one owner.
  const [first] = gone;
  if (!first) return;
  await stowage.tenant(first.principal).deletionAudit.append(
    gone.map((upload) => ({
      kind: "uploads",
      id: `${upload.sessionId}/${upload.filename}`,
      bytes: upload.size,
      by: "cli",
      reason: `last modified ${upload.lastModified.toISOString()}, swept by hand: older than ${olderThanDays} days`,
    })),
  );
}

/** `stowage uploads sweep`: the retention sweep the server runs, by hand and with a dry run. */
function sweepCommand(context: CommandContext): Command {
  return new Command("sweep")
    .description(
      "Delete uploads older than a number of days (what the server's sweeper does with STOWAGE_UPLOAD_RETENTION_DAYS)",
    )
    .addOption(
      new Option("--older-than-days <days>", "delete uploads last modified more than this many days ago")
        .argParser(positiveNumber)
        .makeOptionMandatory(),
    )
    .option("--dry-run", "report without deleting", false)
    .addOption(jsonOption())
    .action(async (options: { olderThanDays: number; dryRun: boolean; json?: boolean }) => {
      await withServices(context, async (services) => {
        const progress = countProgress(context, { json: options.json, label: "sweeping", unit: "keys" });
        const swept = await services.uploads
          .sweepUploads({
            olderThanDays: options.olderThanDays,
            dryRun: options.dryRun,
            onProgress: ({ scanned, swept }) =>
              progress.update(scanned, `${swept} ${options.dryRun ? "to delete" : "deleted"}`),
            onSwept: (gone) => auditSwept(services.stowage, gone, options.olderThanDays),
          })
          .finally(progress.stop);
        const verb = swept.dryRun ? "would delete" : "deleted";
        printResult(context, options.json, swept, () => [
          ...swept.uploads.map(
            (upload) =>
              `${verb} ${upload.principal.kind}:${upload.principal.id} ${upload.sessionId} ${upload.filename} (${upload.size} bytes, ${upload.lastModified.toISOString()})`,
          ),
          `${verb} ${swept.uploads.length} uploads (${swept.deletedBytes} bytes) last modified before ${swept.cutoff.toISOString()}`,
        ]);
      });
    });
}

export function uploadsCommand(context: CommandContext): Command {
  return new Command("uploads")
    .description("Manage uploads across every session (retention)")
    .addCommand(sweepCommand(context));
}
