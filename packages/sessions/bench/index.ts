import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { runBenchmarks } from "@stowage/bench-kit";
import { realTranscripts } from "@stowage/test-support";
import { archiveSession } from "../src/archive/capture-session.js";
import { DEFAULT_MAX_SESSION_BYTES } from "../src/archive/manifest.js";
import {
  BROTLI_QUALITY_BY_AGENT,
  DEFAULT_BROTLI_QUALITY,
  DEFAULT_BROTLI_WINDOW_BITS,
  DEFAULT_SESSION_CODEC,
} from "../src/codec/codecs.js";
import { captureSession } from "../src/index.js";
import { readOpencodeExport } from "../src/opencode/export-json.js";
import { codexRollout, codexRolloutFromReal, opencodeExport } from "./agent-sessions.js";
import { writeBenchSessionTree } from "./session-tree.js";

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

const base = await mkdtemp(join(tmpdir(), "stowage-sessions-bench-"));
const { cwd, configDir, sessionId, bytes } = await writeBenchSessionTree(base);
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

// A 12 MB Codex rollout in its day folder, and a 500-message OpenCode session behind a stand-in
// for `opencode export` (a shell script that prints the export: the real CLI's own time, 1.7 s
// to start on an idle machine, is not Stowage's and would drown the figure). The OpenCode capture
// is timed twice: with the stand-in's process (what a capture costs besides the real CLI), and
// Stowage's own part alone, from the export in memory.
const codexHome = join(base, ".codex");
const codexId = "019e1625-789d-76c0-80ab-3724b5ddb799";
// Real Codex lines when the real transcripts are there (CI has them), else generated ones.
const real = realTranscripts("sessions bench");
const realRolloutLines = real.files("codex").flatMap((file) => real.read(file).split("\n"));
const rollout = Buffer.from(
  realRolloutLines.length > 0
    ? codexRolloutFromReal(codexId, 12_000_000, realRolloutLines)
    : codexRollout(codexId, 12_000_000),
);
console.log(`Codex rollout: ${realRolloutLines.length > 0 ? "real lines" : "generated lines"}`);
await mkdir(join(codexHome, "sessions", "2026", "11", "23"), { recursive: true });
await writeFile(
  join(codexHome, "sessions", "2026", "11", "23", `rollout-2026-11-23T04-00-00-${codexId}.jsonl`),
  rollout,
);
const opencodeId = "ses_df96f1435ffed9ABkI498J7iJN";
const exported = Buffer.from(opencodeExport(opencodeId, 500));
const opencodeHome = join(base, "opencode-home");
await mkdir(opencodeHome);
await writeFile(join(opencodeHome, `${opencodeId}.json`), exported);
const opencodeBin = join(base, "opencode");
await writeFile(opencodeBin, '#!/bin/sh\nexec cat "$HOME/$2.json"\n');
await chmod(opencodeBin, 0o755);
const agentSizes = { codex: [0, 0], opencode: [0, 0] };

let ours = 0;
let baseline = 0;
await runBenchmarks("@stowage/sessions", [
  {
    name: `captureSession of a ${(rollout.byteLength / 1024 / 1024).toFixed(1)} MiB Codex rollout (find by id, read, sha256, archive, ${DEFAULT_SESSION_CODEC}-${BROTLI_QUALITY_BY_AGENT.codex}) vs gzip-6 of the same bytes in memory`,
    target: { kind: "speed", min: 1.0 },
    units: { count: rollout.byteLength, label: "B" },
    rounds: 11,
    ours: async () => {
      agentSizes.codex[0] = (
        await captureSession({ agent: "codex", codexHome, sessionId: codexId })
      ).blobSizeBytes;
    },
    baseline: async () => {
      agentSizes.codex[1] = (await gzip(rollout, { level: 6 })).byteLength;
    },
  },
  {
    name: `captureSession of a 500-message OpenCode export (${(exported.byteLength / 1024 / 1024).toFixed(1)} MiB: start a stand-in CLI that prints it, check the JSON, sha256, archive, ${DEFAULT_SESSION_CODEC}-${BROTLI_QUALITY_BY_AGENT.opencode}) vs gzip-6 of the same bytes in memory`,
    target: { kind: "speed", min: 1.0 },
    units: { count: exported.byteLength, label: "B" },
    rounds: 11,
    ours: async () => {
      agentSizes.opencode[0] = (
        await captureSession({
          agent: "opencode",
          sessionId: opencodeId,
          opencode: { bin: opencodeBin, env: { HOME: opencodeHome } },
        })
      ).blobSizeBytes;
    },
    baseline: async () => {
      agentSizes.opencode[1] = (await gzip(exported, { level: 6 })).byteLength;
    },
  },
  {
    name: `Stowage's own part of that capture, the export already in memory (check the JSON, sha256, archive, ${DEFAULT_SESSION_CODEC}-${BROTLI_QUALITY_BY_AGENT.opencode}) vs gzip-6 of the same bytes`,
    target: { kind: "speed", min: 1.0 },
    units: { count: exported.byteLength, label: "B" },
    rounds: 11,
    ours: async () => {
      const bytes = new Uint8Array(exported.buffer, exported.byteOffset, exported.byteLength);
      readOpencodeExport(bytes, opencodeId);
      await archiveSession(
        "opencode",
        { sessionId: opencodeId, sources: [{ path: `${opencodeId}.json`, bytes }], skipped: [] },
        { codec: DEFAULT_SESSION_CODEC, maxBytes: DEFAULT_MAX_SESSION_BYTES },
      );
    },
    baseline: async () => {
      await gzip(exported, { level: 6 });
    },
  },
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
/** A size row, printed when its case ran (a `BENCH_FILTER` that leaves the case out measures nothing). */
function printSizeRow(label: string, captured: number, gzipped: number): void {
  if (captured === 0 || gzipped === 0) return;
  const ratio = captured / gzipped;
  console.log(
    `- ${label}captured size vs gzip-6 size: ${captured.toLocaleString("en-US")} B vs ${gzipped.toLocaleString("en-US")} B, ratio ${ratio.toFixed(3)}x   target < 1.0x   ${ratio < 1 ? "met" : "MISSED"}`,
  );
  if (ratio >= 1) process.exitCode = 1;
}
for (const [agent, [captured, gzipped]] of Object.entries(agentSizes))
  printSizeRow(`${agent}: `, captured!, gzipped!);
printSizeRow("", ours, baseline);
await rm(base, { recursive: true, force: true });

// The package's other cases, in the same run: a missed target above only sets the exit code, so
// every case is still printed.
await import("./session-store.js");
await import("./store-once.js");
await import("./follow-up-captures.js");
await import("./langgraph-savers.js");
await import("./restore-session.js");
await import("./capture-vs-tar.js");
