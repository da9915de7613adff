import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { type AnyComparison, compare, growth, runComparisons, scratchSpace } from "@stowage/bench-kit";
import { captureSession } from "../src/index.js";
import { type BenchSessionTree, writeBenchSessionTree } from "./session-tree.js";

/**
 * Issue 34's capture row: `captureSession` with its defaults (brotli-4, sha256 per file, the
 * archive, refusing links and special files), its blob then base64 as the wire format sends it,
 * against what a user would type instead, `tar` + `gzip -6` + `base64` of the session's project
 * directory spawned and read into memory, and against document 002's own steps in Node (read
 * every file, gzip-6, base64). Then the capture's cost per MiB at 1, 12 and 50 MB.
 */

const gzip = promisify(zlib.gzip);

/** What a user types: tar streams the directory into gzip at level 6, then base64 on one line. */
const TAR_PIPELINE = 'tar -C "$1" -cf - . | gzip -6 | base64 -w0';

const MiB = (bytes: number) => bytes / 1024 / 1024;

/** Everything `bash -c TAR_PIPELINE` prints for `dir`, in memory; fails if any stage fails. */
function tarGzipBase64(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-o", "pipefail", "-c", TAR_PIPELINE, "bash", dir], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(Buffer.concat(chunks).toString("latin1"));
      else reject(new Error(`${TAR_PIPELINE} exited with ${code}`));
    });
  });
}

async function captureBase64(tree: BenchSessionTree): Promise<string> {
  const { blob } = await captureSession({
    configDir: tree.configDir,
    cwd: tree.cwd,
    sessionId: tree.sessionId,
  });
  return Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString("base64");
}

async function readGzipBase64(tree: BenchSessionTree): Promise<string> {
  const contents = await Promise.all(tree.paths.map((path) => readFile(join(tree.projectDir, path))));
  return (await gzip(Buffer.concat(contents), { level: 6 })).toString("base64");
}

function contenders(tree: BenchSessionTree) {
  return [
    {
      name: "tar + gzip -6 + base64 (spawned)",
      kind: "peer" as const,
      note: `bash -o pipefail -c '${TAR_PIPELINE}' of the project directory, stdout read into memory; no hash, no check`,
      run: () => tarGzipBase64(tree.projectDir),
    },
    {
      name: "read + gzip-6 + base64 (Node)",
      kind: "baseline" as const,
      note: "readFile of every file, zlib gzip level 6 of their bytes (thread pool), base64; no hash, no check",
      run: () => readGzipBase64(tree),
    },
  ];
}

function captureCases(trees: Map<number, BenchSessionTree>): AnyComparison[] {
  const twelve = trees.get(12)!;
  const sizes = new Map<string, number>();
  return [
    compare({
      name: `captureSession of the ${MiB(twelve.bytes.byteLength).toFixed(1)} MiB Claude Code session (brotli-4, defaults) + base64 vs tar + gzip -6 + base64`,
      units: { count: twelve.bytes.byteLength, label: "B" },
      rounds: 11,
      freshState: "the same files, only read (in the page cache for every contender)",
      ours: async () => sizes.set("ours", (await captureBase64(twelve)).length),
      against: contenders(twelve).map((contender) => ({
        ...contender,
        ...(contender.kind === "peer" ? { target: { kind: "speed" as const, min: 1.0 } } : {}),
        run: async () => sizes.set(contender.name, (await contender.run()).length),
      })),
      cleanup: () => {
        for (const [name, length] of sizes)
          console.log(`  base64 length, ${name}: ${length.toLocaleString("en-US")}`);
      },
    }),
    ...growth({
      name: "captureSession + base64 of a Claude Code session, by size",
      sizes: [...trees.keys()],
      unit: "MiB",
      items: (size) => MiB(trees.get(size)!.bytes.byteLength),
      make: (size) => {
        const tree = trees.get(size)!;
        return {
          name: `captureSession + base64 of a ${MiB(tree.bytes.byteLength).toFixed(1)} MiB session vs tar + gzip -6 + base64`,
          rounds: 3,
          units: { count: tree.bytes.byteLength, label: "B" },
          freshState: "the same files, only read",
          ours: () => captureBase64(tree),
          against: contenders(tree).slice(0, 1),
        };
      },
    }),
  ];
}

const scratch = await scratchSpace("sessions-capture");
try {
  const trees = new Map<number, BenchSessionTree>();
  for (const [size, mainBytes] of [
    [1, 490_000],
    [12, undefined],
    [50, 41_700_000],
  ] as const) {
    trees.set(size, await writeBenchSessionTree(await scratch.directory(`${size}mb`), mainBytes));
  }
  await runComparisons("@stowage/sessions: capture against tar + gzip (issue 34)", captureCases(trees));
} finally {
  await scratch.dispose();
}
