import { Writable } from "node:stream";
import type { GarbageCollectionProgress } from "@stowage/blob-store";
import { StowageError } from "@stowage/core";
import { Command, Option } from "commander";
import { type CommandContext, resolvePath } from "./context.js";
import { inputFiles, readInputFile } from "./input-file.js";
import { withServices, withStoredData } from "./open.js";
import { jsonOption, printResult } from "./output.js";
import { type CountProgress, countProgress } from "./progress.js";
import { usageError } from "./usage-error.js";

function nonNegativeNumber(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (value.trim() === "" || !Number.isFinite(number) || number < 0) {
      throw usageError(`--${name} must be a non-negative number, got ${value}`);
    }
    return number;
  };
}

/**
 * A corrupted blob's INTEGRITY error as the user sees it: the hash asked for and the hash its bytes
 * have, not the store's internal key of the object (blob-store keeps it in the details for an
 * operator's logs). Anything else passes as it is.
 */
function asUserError(err: unknown): unknown {
  if (!StowageError.is(err, "INTEGRITY") || err.details?.key === undefined) return err;
  const { key: _internal, ...details } = err.details;
  return new StowageError("INTEGRITY", err.message, {
    ...(err.reason === undefined ? {} : { reason: err.reason }),
    details,
  });
}

function putCommand(context: CommandContext): Command {
  return new Command("put")
    .description("Store files as blobs and print their refs")
    .argument("<file...>", "files to store (relative to this directory)")
    .addOption(jsonOption())
    .action(async (given: string[], options: { json?: boolean }) => {
      await using inputs = await inputFiles(context, given);
      await withStoredData(context, async ({ blobs }) => {
        const stored: { file: string; ref: string; hash: string; size: number; created: boolean }[] = [];
        for (const file of inputs.files) {
          const put = await blobs.put(readInputFile(file));
          stored.push({
            file: file.given,
            ref: put.ref,
            hash: put.hash,
            size: put.size,
            created: put.created,
          });
        }
        printResult(context, options.json, stored, () =>
          stored.map(
            (blob) =>
              `${blob.ref}  ${blob.size} bytes  ${blob.created ? "stored" : "already stored"}  ${blob.file}`,
          ),
        );
      });
    });
}

function getCommand(context: CommandContext): Command {
  return new Command("get")
    .description(
      "Write a blob's bytes, verified against its hash, to a file (written whole or not at all) or stdout",
    )
    .argument("<hash-or-ref>", "the blob's SHA-256 or blob:sha256: ref")
    .option("--out <file>", "write here instead of stdout (relative to this directory)")
    .option("--json", "with --out: print { path, size } as JSON; errors as JSON")
    .action(async (id: string, options: { out?: string; json?: boolean }) => {
      const { sharedStorePlace } = await import("./shared-stores.js");
      await withStoredData(context, async ({ blobs, config }) => {
        const stream = await blobs.stream(id);
        if (!stream) throw new StowageError("NOT_FOUND", `no blob ${id} in ${sharedStorePlace(config)}`);
        if (options.out === undefined) {
          // A corrupted blob breaks off at its end: stdout has the bytes, the exit code says they are bad.
          await stream
            .pipeTo(Writable.toWeb(context.stdout) as WritableStream<Uint8Array>, { preventClose: true })
            .catch((err: unknown) => {
              throw asUserError(err);
            });
          return;
        }
        // The stream fails at its end when the bytes do not hash to the ref: written to a temp file
        // beside the target and renamed only when whole and verified, so a failure leaves nothing.
        const { writeFileAtomic } = await import("@stowage/core/fs");
        const out = resolvePath(context, options.out);
        const size = await writeFileAtomic(out, stream).catch((err: unknown) => {
          throw asUserError(err);
        });
        if (options.json) context.out(JSON.stringify({ path: out, size }, null, 2));
        else context.note(`wrote ${size} bytes to ${out}`);
      });
    });
}

function verifyCommand(context: CommandContext): Command {
  return new Command("verify")
    .description("Re-hash blobs (all, or the ones given) and report any that are corrupted or missing")
    .argument("[hash-or-ref...]", "blobs to verify (default: every blob)")
    .addOption(jsonOption())
    .action(async (given: string[], options: { json?: boolean }) => {
      await withStoredData(context, async ({ blobs }) => {
        const progress = countProgress(context, { json: options.json, label: "verifying", unit: "blobs" });
        const ids = [...given];
        const failed: { blob: string; code: string; message: string }[] = [];
        try {
          if (ids.length === 0) {
            for await (const blob of blobs.iterate()) progress.update(ids.push(blob.hash), "listing");
          }
          progress.total(ids.length);
          for (const [index, id] of ids.entries()) {
            try {
              await blobs.verify(id);
            } catch (err) {
              if (!StowageError.is(err, "INTEGRITY") && !StowageError.is(err, "NOT_FOUND")) throw err;
              failed.push({ blob: id, code: err.code, message: err.message });
            }
            progress.update(index + 1, failed.length > 0 ? `${failed.length} failed` : undefined);
          }
        } finally {
          progress.stop();
        }
        printResult(context, options.json, { verified: ids.length - failed.length, failed }, () => [
          ...failed.map((failure) => `${failure.code}: ${failure.message}`),
          `${ids.length - failed.length} of ${ids.length} blobs verified`,
        ]);
        if (failed.length > 0)
          throw new StowageError("INTEGRITY", `${failed.length} blob(s) failed verification`);
      });
    });
}

function restoreCommand(context: CommandContext): Command {
  return new Command("restore")
    .description(
      "Bring back blobs garbage collection moved to the blob trash (kept STOWAGE_TRASH_DAYS, see `stowage audit`)",
    )
    .argument("<hash-or-ref...>", "blobs to bring back")
    .addOption(jsonOption())
    .action(async (given: string[], options: { json?: boolean }) => {
      await withStoredData(context, async ({ blobs }) => {
        const restored: string[] = [];
        const missing: string[] = [];
        for (const id of given) ((await blobs.restoreCollected(id)) ? restored : missing).push(id);
        printResult(context, options.json, { restored, missing }, () => [
          ...restored.map((id) => `restored ${id}`),
          ...missing.map((id) => `not in the blob trash: ${id}`),
        ]);
        if (missing.length > 0) {
          throw new StowageError(
            "NOT_FOUND",
            `${missing.length} blob(s) not in the blob trash (purged, or never taken)`,
            {
              reason: "NOT_IN_TRASH",
            },
          );
        }
      });
    });
}

/** A collection's steps on one progress line: roots read, blobs scanned, then candidates decided. */
function gcProgress(progress: CountProgress): (step: GarbageCollectionProgress) => void {
  return ({ step, done, total }) => {
    if (step === "collect" && total !== undefined) progress.total(total);
    progress.update(done, step === "roots" ? "reading refs" : step === "scan" ? "scanning" : "deciding");
  };
}

interface GcOptions {
  graceHours: number;
  dryRun: boolean;
  singleHost: boolean;
  agentSessionsDir?: string[];
  json?: boolean;
}

function gcCommand(context: CommandContext): Command {
  return new Command("gc")
    .description(
      "Delete blobs that nothing references (session files and artifacts, threads, content refs, session blobs, uploads)",
    )
    .addOption(
      new Option("--grace-hours <hours>", "keep unreferenced blobs younger than this")
        .default(24)
        .argParser(nonNegativeNumber("grace-hours")),
    )
    .option("--dry-run", "report without deleting", false)
    .option(
      "--single-host",
      "with S3 or PostgreSQL: this data directory holds every agent session of the deployment",
      false,
    )
    .option(
      "--agent-sessions-dir <dir...>",
      "with S3 or PostgreSQL: the agent-sessions directories of the other hosts, mounted here",
    )
    .addOption(jsonOption())
    .action(async (options: GcOptions) => {
      await withServices(context, async (services) => {
        const progress = countProgress(context, { json: options.json, label: "collecting", unit: "blobs" });
        // The deployment's collection: every store's roots and owners' marks, each deleted blob
        // recorded in the deletion audit of the principals that had stored it (`stowage audit`).
        const report = await services.stowage
          .collectGarbage({
            singleHost: options.singleHost,
            otherAgentSessionsDirs: (options.agentSessionsDir ?? []).map((dir) => resolvePath(context, dir)),
            graceMs: options.graceHours * 3600 * 1000,
            dryRun: options.dryRun,
            onProgress: gcProgress(progress),
          })
          .finally(progress.stop);
        printResult(context, options.json, report, () => [
          `${report.dryRun ? "would delete" : "deleted"} ${report.deleted} of ${report.scanned} blobs ` +
            `(${report.deletedBytes} bytes); ${report.referenced} referenced, ${report.young} within the grace period; ` +
            `${report.staleOwnerMarks} owners' marks of blobs that are gone ${report.dryRun ? "to remove" : "removed"}; ` +
            `blob trash: ${report.trashed} ${report.dryRun ? "to move there" : "moved there"}, ` +
            `${report.purged} ${report.dryRun ? "to purge" : "purged"}, ${report.restoredFromTrash} named again ${report.dryRun ? "to bring back" : "brought back"}`,
        ]);
      });
    });
}

export function blobCommand(context: CommandContext): Command {
  return new Command("blob")
    .description("Store, read, verify and garbage-collect content-addressed blobs")
    .addCommand(putCommand(context))
    .addCommand(getCommand(context))
    .addCommand(verifyCommand(context))
    .addCommand(gcCommand(context))
    .addCommand(restoreCommand(context));
}
