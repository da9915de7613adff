import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore } from "@stowage/core";
import { seededRandom } from "@stowage/core/testing";
import { encodePng, realTranscripts } from "@stowage/test-support";
import { captureSession } from "../src/archive/capture-session.js";
import { writeSessionTree } from "../src/testing/write-session-tree.js";

/**
 * Follow-up captures of one growing Claude Code session, side by side in one run: each capture
 * as one self-contained archive (what a follow-up stores today) and as chunks in a blob store
 * (what it adds after dedupe). The session is real transcript lines (all of Claude Code's in the
 * real transcripts, over and over) with a screenshot read every 100 lines, each image twice as
 * Claude Code writes it; each capture has 10% more lines than the one before.
 */

const sessionId = "624a4a58-b34c-462d-a70d-13421c8125a8";
const real = realTranscripts("sessions bench: follow-up captures");
const realLines = real.files("claude-code").flatMap((file) => real.read(file).split(/(?<=\n)/));

function screenshot(seed: number): string {
  const random = seededRandom(seed);
  const png = encodePng(320, 200, (x, y) =>
    y % 8 < 4 ? [255, 255, 255] : [random() * 256, x % 256, y % 256],
  );
  const base64 = png.toString("base64");
  const line = {
    type: "user",
    sessionId,
    message: {
      role: "user",
      content: [
        {
          tool_use_id: `toolu_${seed}`,
          type: "tool_result",
          content: [{ type: "image", source: { type: "base64", data: base64, media_type: "image/png" } }],
        },
      ],
    },
    toolUseResult: { type: "image", file: { base64, type: "image/png", originalSize: png.byteLength } },
  };
  return `${JSON.stringify(line)}\n`;
}

/** The session's first `count` lines. */
function sessionLines(count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    lines.push(realLines[i % realLines.length]!);
    if (i % 100 === 99) lines.push(screenshot(i));
  }
  return lines.join("");
}

const base = await mkdtemp(join(tmpdir(), "stowage-follow-up-bench-"));
await mkdir(join(base, "workspace"));
const cwd = await realpath(join(base, "workspace"));
const configDir = join(base, ".claude");

/**
 * `captures` follow-ups from `firstLines` lines, each `growth` longer: bytes and time of both ways,
 * each capture made both ways one after the other (`chunkedFirst` says which goes first), so that
 * both see the same file cache and load.
 */
async function followUps(
  captures: number,
  firstLines: number,
  growth: number,
  chunkedFirst = false,
  processPerCapture = false,
) {
  const objects = createMemoryObjectStore();
  const oneProcess = createBlobStore({ store: objects });
  // A blob store object of its own per capture: what a process per capture (the CLI) has, with
  // nothing compressed by the capture before remembered (see src/chunks/remembered-chunks.ts).
  const blobsOf = () => (processPerCapture ? createBlobStore({ store: objects }) : oneProcess);
  let plainBytes = 0;
  let chunkedBytes = 0;
  let plainMs = 0;
  let chunkedMs = 0;
  let last = { raw: 0, blob: 0 };
  for (let k = 0; k < captures; k++) {
    const text = sessionLines(Math.round(firstLines * growth ** k));
    await writeSessionTree({ configDir, cwd, sessionId, files: new Map([[`${sessionId}.jsonl`, text]]) });
    const timed = async <T>(capture: () => Promise<T>): Promise<[T, number]> => {
      const start = performance.now();
      const result = await capture();
      return [result, performance.now() - start];
    };
    const capturePlain = () => timed(() => captureSession({ configDir, cwd, sessionId }));
    const blobs = blobsOf();
    const captureChunked = () => timed(() => captureSession({ configDir, cwd, sessionId, blobs }));
    let plain: Awaited<ReturnType<typeof capturePlain>>;
    let chunked: Awaited<ReturnType<typeof captureChunked>>;
    if (chunkedFirst) {
      chunked = await captureChunked();
      plain = await capturePlain();
    } else {
      plain = await capturePlain();
      chunked = await captureChunked();
    }
    plainMs += plain[1];
    chunkedMs += chunked[1];
    plainBytes += plain[0].storedBytes;
    chunkedBytes += chunked[0].storedBytes;
    last = { raw: plain[0].rawSizeBytes, blob: plain[0].blobSizeBytes };
  }
  return { plainBytes, chunkedBytes, plainMs, chunkedMs, last };
}

const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
console.log("\n@stowage/sessions: follow-up captures of one growing session (each +10% lines)");
// The ten captures over and over, each round with a new blob store: the first round warms up
// (JIT, file cache), the others are timed; which way goes first alternates from round to round.
const ROUNDS = 5;
await followUps(10, 200, 1.1);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
/** The ten captures over and over (a new blob store each round), which way goes first alternating. */
async function timedRounds(processPerCapture: boolean) {
  const rounds: Awaited<ReturnType<typeof followUps>>[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    rounds.push(await followUps(10, 200, 1.1, round % 2 === 1, processPerCapture));
  }
  const ratios = rounds.map((run) => run.chunkedMs / run.plainMs).sort((a, b) => a - b);
  return { rounds, ratios, ratio: median(ratios) };
}
const inOneProcess = await timedRounds(false);
const perProcess = await timedRounds(true);
const ten = inOneProcess.rounds[0]!;
const storedRatio = ten.chunkedBytes / ten.last.blob;
console.log(
  `- 10 captures, the last ${MiB(ten.last.raw)} (${MiB(ten.last.blob)} as one archive): stored ${MiB(ten.chunkedBytes)} as chunks vs ${MiB(ten.plainBytes)} as archives; ` +
    `total stored / last capture's compressed size ${storedRatio.toFixed(2)}x   target <= 1.5x   ${storedRatio <= 1.5 ? "met" : "MISSED"}`,
);
const timeLine = (
  label: string,
  { rounds, ratios, ratio }: Awaited<ReturnType<typeof timedRounds>>,
  target: string,
) =>
  console.log(
    `- capture time of the 10, ${label}, chunked / one archive each: ${median(rounds.map((run) => run.chunkedMs)).toFixed(0)} ms / ${median(rounds.map((run) => run.plainMs)).toFixed(0)} ms, ` +
      `ratio ${ratio.toFixed(2)}x (${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)}, median of ${ROUNDS} rounds after one warm-up)   ${target}`,
  );
const timeRatio = inOneProcess.ratio;
timeLine(
  "in one process (the app's POST /requests/:id/session-blobs, a worker)",
  inOneProcess,
  `target <= 1.1x   ${timeRatio <= 1.1 ? "met" : "MISSED"}`,
);
timeLine(
  "a process per capture (the CLI: every chunk compressed again)",
  perProcess,
  "(no target: each chunk is compressed to learn its ref)",
);
if (storedRatio > 1.5 || timeRatio > 1.1) process.exitCode = 1;
console.log("- how stored bytes grow with follow-ups (each +2% lines from 200):");
for (const captures of [1, 10, 50]) {
  const run = await followUps(captures, 200, 1.02);
  console.log(
    `  ${String(captures).padStart(2)} captures: ${MiB(run.chunkedBytes)} as chunks vs ${MiB(run.plainBytes)} as archives`,
  );
}
await rm(base, { recursive: true, force: true });
