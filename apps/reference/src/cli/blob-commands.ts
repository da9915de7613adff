import { createReadStream, createWriteStream } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { collectGarbage, scanSessionFilesForBlobRefs } from "@stowage/blob-store";
import { StowageError } from "@stowage/core";
import type { Services } from "../services.js";
import type { Command } from "./command.js";
import { withServices } from "./context.js";

/** Every file that may reference blobs: agent session files, posted thread items, thread logs. */
async function rootFiles(services: Services): Promise<string[]> {
  const { dataDir } = services.config;
  const roots = [services.agentSessions.dir, join(dataDir, "jobs")];
  const logs = await readdir(join(dataDir, "jobs"), { recursive: true }).catch(() => [] as string[]);
  const threadLogs = logs
    .filter((path) => path.endsWith("thread.log"))
    .map((path) => join(dataDir, "jobs", path));
  const existing = await Promise.all(
    roots.map((root) =>
      readdir(root).then(
        () => root,
        () => undefined,
      ),
    ),
  );
  return [...existing.filter((root): root is string => root !== undefined), ...threadLogs];
}

export const blobCommand: Command = {
  name: "blob",
  summary: "Store, read, verify and garbage-collect content-addressed blobs in the data directory",
  subcommands: [
    {
      name: "put",
      summary: "Store files as blobs and print their refs",
      args: "<file…>",
      async run({ positionals }, context) {
        if (positionals.length === 0)
          throw new StowageError("INVALID_INPUT", "give at least one file to store");
        await withServices(context, async (services) => {
          for (const file of positionals) {
            const body = Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>;
            const stored = await services.blobs.put(body);
            context.out(
              `${stored.ref}  ${stored.size} bytes  ${stored.created ? "stored" : "already stored"}  ${file}`,
            );
          }
        });
      },
    },
    {
      name: "get",
      summary: "Write a blob's bytes (verified against its hash) to a file or stdout",
      args: "<hash|ref>",
      options: { out: { type: "string", placeholder: "file", description: "write here instead of stdout" } },
      async run({ values, positionals }, context) {
        const id = positionals[0];
        if (!id) throw new StowageError("INVALID_INPUT", "give the blob's hash or blob:sha256: ref");
        await withServices(context, async (services) => {
          const stream = await services.blobs.stream(id);
          if (!stream) throw new StowageError("NOT_FOUND", `no blob ${id}`);
          const target = typeof values.out === "string" ? createWriteStream(values.out) : process.stdout;
          await stream.pipeTo(Writable.toWeb(target) as WritableStream<Uint8Array>);
          if (typeof values.out === "string") context.out(`wrote ${values.out}`);
        });
      },
    },
    {
      name: "verify",
      summary: "Re-hash blobs (all, or the ones given) and report any that are corrupted",
      args: "[hash|ref…]",
      async run({ positionals }, context) {
        await withServices(context, async (services) => {
          const ids = positionals.length > 0 ? positionals : [];
          if (ids.length === 0) for await (const blob of services.blobs.iterate()) ids.push(blob.hash);
          let corrupted = 0;
          for (const id of ids) {
            try {
              await services.blobs.verify(id);
            } catch (err) {
              if (!StowageError.is(err, "INTEGRITY") && !StowageError.is(err, "NOT_FOUND")) throw err;
              corrupted++;
              context.out(`${err.code}: ${err.message}`);
            }
          }
          context.out(`${ids.length - corrupted} of ${ids.length} blobs verified`);
          if (corrupted > 0) throw new StowageError("INTEGRITY", `${corrupted} blob(s) failed verification`);
        });
      },
    },
    {
      name: "gc",
      summary: "Delete blobs that no session file, thread item or thread log references",
      options: {
        "grace-hours": {
          type: "string",
          placeholder: "hours",
          default: "24",
          description: "keep unreferenced blobs younger than this",
        },
        "dry-run": { type: "boolean", default: false, description: "report without deleting" },
      },
      async run({ values }, context) {
        const graceHours = Number(values["grace-hours"]);
        if (!Number.isFinite(graceHours) || graceHours < 0) {
          throw new StowageError(
            "INVALID_INPUT",
            `--grace-hours must be a non-negative number, got ${String(values["grace-hours"])}`,
          );
        }
        await withServices(context, async (services) => {
          const roots = await rootFiles(services);
          const report = await collectGarbage({
            blobs: services.blobs,
            roots: () => scanSessionFilesForBlobRefs(roots),
            graceMs: graceHours * 3600 * 1000,
            dryRun: values["dry-run"] === true,
          });
          context.out(
            `${report.dryRun ? "would delete" : "deleted"} ${report.deleted} of ${report.scanned} blobs ` +
              `(${report.deletedBytes} bytes); ${report.referenced} referenced, ${report.young} within the grace period`,
          );
        });
      },
    },
  ],
};
