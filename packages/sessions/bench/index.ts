import { mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { runBenchmarks } from "@stowage/bench-kit";
import {
  captureSession,
  DEFAULT_BROTLI_QUALITY,
  DEFAULT_BROTLI_WINDOW_BITS,
  DEFAULT_SESSION_CODEC,
} from "../src/index.js";
import { realisticSessionTree, writeSessionTree } from "../src/testing/index.js";

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

const base = await mkdtemp(join(tmpdir(), "stowage-sessions-bench-"));
await mkdir(join(base, "workspace"));
const cwd = await realpath(join(base, "workspace"));
const configDir = join(base, ".claude");
const sessionId = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
// About 12 MB: a 9.5 MB main transcript, two 0.9 MB subagents, tool results and a legacy agent.
const files = realisticSessionTree({
  sessionId,
  cwd,
  mainBytes: 9_500_000,
  subagentBytes: 900_000,
  screenshotEvery: 30,
});
const location = await writeSessionTree({ configDir, cwd, sessionId, files });
const bytes = Buffer.concat(
  await Promise.all([...files.keys()].map((path) => readFile(join(location.projectDir, path)))),
);
const megabytes = (bytes.byteLength / 1024 / 1024).toFixed(1);

// The measurement behind DEFAULT_SESSION_CODEC: size and time of each candidate on these bytes.
console.log(`\ncodec candidates on the same ${megabytes} MiB (median of 7 interleaved rounds)`);
const candidates: [string, () => Promise<Buffer>][] = [
  ["gzip-6", () => gzip(bytes, { level: 6 })],
  ...[
    [4, 22],
    [4, DEFAULT_BROTLI_WINDOW_BITS],
    [5, 22],
    [6, 22],
  ].map(([quality, window]): [string, () => Promise<Buffer>] => [
    `brotli-${quality} (window 2^${window})`,
    () =>
      brotli(bytes, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: quality!,
          [zlib.constants.BROTLI_PARAM_LGWIN]: window!,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
        },
      }),
  ]),
];
// Interleaved rounds, so that every candidate sees the same machine load.
const times = new Map<string, number[]>(candidates.map(([name]) => [name, []]));
const sizes = new Map<string, number>();
for (let round = 0; round < 7; round++) {
  for (const [name, run] of candidates) {
    const start = performance.now();
    sizes.set(name, (await run()).byteLength);
    times.get(name)!.push(performance.now() - start);
  }
}
for (const [name, values] of times) {
  values.sort((a, b) => a - b);
  console.log(
    `  ${name.padEnd(24)} ${(sizes.get(name)! / bytes.byteLength).toFixed(4)} of the input   ${values[3]!.toFixed(1)} ms`,
  );
}

let ours = 0;
let baseline = 0;
await runBenchmarks("@stowage/sessions", [
  {
    name: `captureSession of a ${megabytes} MiB session tree (${DEFAULT_SESSION_CODEC}-${DEFAULT_BROTLI_QUALITY}, read + sha256 + archive) vs gzip-6 of the same bytes in memory`,
    target: { kind: "speed", min: 1.0 },
    units: { count: bytes.byteLength, label: "B" },
    rounds: 11,
    ours: async () => {
      ours = (await captureSession({ configDir, cwd, sessionId })).blobSizeBytes;
    },
    baseline: async () => {
      baseline = (await gzip(bytes, { level: 6 })).byteLength;
    },
  },
]);
const sizeRatio = ours / baseline;
console.log(
  `- captured size vs gzip-6 size: ${ours.toLocaleString("en-US")} B vs ${baseline.toLocaleString("en-US")} B, ratio ${sizeRatio.toFixed(3)}x   target < 1.0x   ${sizeRatio < 1 ? "met" : "MISSED"}`,
);
if (sizeRatio >= 1) process.exitCode = 1;
await rm(base, { recursive: true, force: true });
