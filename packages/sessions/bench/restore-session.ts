import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { runBenchmarks } from "@stowage/bench-kit";
import { captureSession, restoreSession } from "../src/index.js";
import { writeBenchSessionTree } from "./session-tree.js";

/**
 * Restore of the 12 MB Claude Code session (the capture bench's tree) into a new directory each
 * round: every check a restore makes (decompress within a bound, manifest, sha256 per file, safe
 * paths, no link followed, staged then swapped in) against gunzip of the same files and one
 * writeFile each, which checks nothing. Issue 35 asks that restoring the session's whole
 * environment keeps this within 1.2× of what it was.
 */

const gunzip = promisify(zlib.gunzip);
const gzip = promisify(zlib.gzip);

const base = await mkdtemp(join(tmpdir(), "stowage-restore-bench-"));
const { cwd, configDir: capturedFrom, sessionId, paths, contents } = await writeBenchSessionTree(base);
const captured = await captureSession({ configDir: capturedFrom, cwd, sessionId });
const gzipped = await Promise.all(contents.map((bytes) => gzip(bytes, { level: 6 })));
const megabytes = (captured.rawSizeBytes / 1024 / 1024).toFixed(1);

let round = 0;
await runBenchmarks("@stowage/sessions restore", [
  {
    name: `restoreSession of the ${megabytes} MiB session tree (${captured.codec}, every check, staged and swapped in) vs gunzip + writeFile of its files, unchecked`,
    target: { kind: "speed", min: 0.5 },
    units: { count: captured.rawSizeBytes, label: "B" },
    rounds: 11,
    ours: async () => {
      const configDir = join(base, `restored-${round++}`, ".claude");
      await restoreSession(captured, { configDir, cwd });
    },
    baseline: async () => {
      const dir = join(base, `written-${round++}`);
      for (let i = 0; i < paths.length; i++) {
        const target = join(dir, paths[i]!);
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, await gunzip(gzipped[i]!));
      }
    },
  },
]);
await rm(base, { recursive: true, force: true });
