// Benchmarks of the two cases, each against the raw Node operation doing the same work,
// measured in the same run: tool output through an OutputSink vs fs.createWriteStream, and a
// page of lines from a 2 GB artifact vs a raw positional-read scan; and the sanitizing of what the
// model sees against the common regex strip (ansi-regex's pattern and a control-character class).
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createArtifactStore, createInternalUrlRouter, createOutputSink } from "@stowage/artifacts";
import { peakRssDuring, runBenchmarks } from "@stowage/bench-kit";
import { sanitizeText } from "@stowage/core";

const MiB = 1024 * 1024;
const SINK_BYTES = 512 * MiB;
const CHUNK_BYTES = 64 * 1024;
const RSS_LIMIT_BYTES = 64 * 1000 * 1000;
const BIG_ARTIFACT_BYTES = 2 * 1024 * MiB;
const FIRST_LINE = 100_000;
const LAST_LINE = 100_100;
const SCAN_CHUNK_BYTES = MiB;

const base = await mkdtemp(join(tmpdir(), "stowage-artifacts-bench-"));

// Tool-like output: lines of varying length. Every push gets a fresh copy of one of 16 64 KiB
// templates, as a pipe delivers new buffers, so that memory held by queued chunks is real.
const templates = Array.from({ length: 16 }, (_, c) => {
  let text = "";
  for (let i = 0; text.length < CHUNK_BYTES; i++)
    text += `[${c}:${i}] ${"output ".repeat(1 + ((i * 7) % 20))}\n`;
  return new TextEncoder().encode(text.slice(0, CHUNK_BYTES));
});
const chunkCount = SINK_BYTES / CHUNK_BYTES;
const chunk = (i: number) => Buffer.from(templates[i % templates.length]!);

let sinkRun = 0;
const sinkDir = () => join(base, `sink-${sinkRun}`);

async function throughSink(): Promise<void> {
  const store = createArtifactStore({ dir: sinkDir() });
  const sink = createOutputSink({ artifacts: store, toolType: "bash" });
  try {
    for (let i = 0; i < chunkCount; i++) await sink.push(chunk(i));
    const summary = await sink.dump();
    if (summary.artifactId === undefined || summary.totalBytes !== SINK_BYTES) {
      throw new Error(`sink lost output: ${JSON.stringify({ ...summary, text: undefined })}`);
    }
  } finally {
    await sink.dispose();
  }
}

async function throughWriteStream(): Promise<void> {
  const stream = createWriteStream(join(sinkDir(), "baseline.log"));
  for (let i = 0; i < chunkCount; i++) {
    if (!stream.write(chunk(i))) await once(stream, "drain");
  }
  stream.end();
  await once(stream, "close");
}

async function freshSinkDir(): Promise<void> {
  await rm(sinkDir(), { recursive: true, force: true });
  sinkRun++;
  await mkdir(sinkDir(), { recursive: true });
}

// Memory, first thing in the process: resident growth while 512 MiB go through one sink. This
// cold run includes the one-time growth of the heap and allocator; a second, warm run shows the
// steady state, against createWriteStream measured warm as well.
await freshSinkDir();
const sinkRssCold = await peakRssDuring(throughSink);
await freshSinkDir();
await throughWriteStream();
await freshSinkDir();
const sinkRssWarm = await peakRssDuring(throughSink);
await freshSinkDir();
const streamRssWarm = await peakRssDuring(throughWriteStream);

// The 2 GB artifact: numbered lines first (the ones read), then filler up to the size.
const store = createArtifactStore({ dir: join(base, "2026-01-01T00-00-00-000Z_bench") });
const writer = await store.openArtifactWriter("bash");
{
  const numbered: string[] = [];
  for (let i = 1; i <= 2 * LAST_LINE; i++) numbered.push(`line ${i} ${"x".repeat(i % 120)}\n`);
  await writer.write(new TextEncoder().encode(numbered.join("")));
  const filler = new TextEncoder().encode(`${"filler line of a long log\n".repeat((4 * MiB) / 26)}`);
  while (writer.bytesWritten < BIG_ARTIFACT_BYTES) await writer.write(filler);
  await writer.publish();
}
const bigPath = writer.path;
const router = createInternalUrlRouter({ artifacts: store });
const pageUrl = `artifact://${writer.id}`;
const page = { offset: FIRST_LINE, limit: LAST_LINE - FIRST_LINE + 1 };

/** The raw baseline: positional reads of one reused buffer, counting newlines up to the lines wanted. */
async function rawSeekingScan(): Promise<string> {
  const handle = await open(bigPath, "r");
  try {
    const buffer = Buffer.allocUnsafe(SCAN_CHUNK_BYTES);
    const parts: Buffer[] = [];
    let line = 1;
    let position = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.byteLength, position);
      if (bytesRead === 0) break;
      let cursor = 0;
      let start = line >= FIRST_LINE ? 0 : -1;
      while (cursor < bytesRead && line <= LAST_LINE) {
        const newline = buffer.indexOf(10, cursor);
        if (newline === -1 || newline >= bytesRead) {
          cursor = bytesRead;
          break;
        }
        line++;
        cursor = newline + 1;
        if (line === FIRST_LINE) start = cursor;
      }
      if (start !== -1) parts.push(Buffer.from(buffer.subarray(start, cursor)));
      if (line > LAST_LINE) break;
      position += bytesRead;
    }
    return Buffer.concat(parts).toString("utf8");
  } finally {
    await handle.close();
  }
}

const pageRss = await peakRssDuring(async () => {
  await router.read(pageUrl, page);
});
const ours = await router.read(pageUrl, page);
const expected = await rawSeekingScan();
if (
  ours.text !== expected ||
  !ours.text.startsWith(`line ${FIRST_LINE} `) ||
  ours.lines?.last !== LAST_LINE
) {
  throw new Error("the paged read and the raw scan disagree");
}

// Colored test-runner output with progress redraws: what a bash tool hands the sink.
const COLORED_BYTES = 8 * MiB;
const colored = (() => {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < COLORED_BYTES; i++) {
    const line =
      i % 10 === 0
        ? `\u001b[2K\u001b[1G${i % 100}% [${"=".repeat(i % 40)}>]\r`
        : `\u001b[32m✓\u001b[0m test ${i} \u001b[2m(${i % 97} ms)\u001b[22m ${"ok ".repeat(i % 30)}\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join("");
})();
// The regex of the ansi-regex package (what strip-ansi uses), then C0/C1 controls but \n and \t.
const ANSI_REGEX =
  /[\u001B\u009B][[\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?\u0007)|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-ntqry=><~]))/g;
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const regexStrip = (text: string) => text.replace(ANSI_REGEX, "").replace(CONTROLS, "");

await runBenchmarks("@stowage/artifacts", [
  {
    name: "sanitizeText of 8 MiB of colored test output vs ansi-regex's strip + a control-character replace",
    target: { kind: "time", max: 2 },
    units: { count: COLORED_BYTES, label: "B" },
    rounds: 15,
    ours: async () => sanitizeText(colored),
    baseline: async () => regexStrip(colored),
  },
  {
    name: "512 MiB of tool output through an OutputSink in 64 KiB chunks vs the same chunks to fs.createWriteStream",
    target: { kind: "speed", min: 0.8 },
    units: { count: SINK_BYTES, label: "B" },
    rounds: 7,
    prepare: freshSinkDir,
    ours: throughSink,
    baseline: throughWriteStream,
    cleanup: () => rm(sinkDir(), { recursive: true, force: true }),
  },
  {
    name: `artifact:// lines ${FIRST_LINE.toLocaleString("en-US")}–${LAST_LINE.toLocaleString("en-US")} of a 2 GB artifact vs a raw fs positional-read scan`,
    target: { kind: "time", max: 2 },
    rounds: 41,
    ours: () => router.read(pageUrl, page),
    baseline: rawSeekingScan,
  },
]);

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const rssMet = sinkRssCold < RSS_LIMIT_BYTES;
console.log(
  [
    "- peak RSS growth, 512 MiB through an OutputSink in 64 KiB chunks",
    `    ours, cold ${mb(sinkRssCold).padStart(9)}   target < ${mb(RSS_LIMIT_BYTES)}   ${rssMet ? "met" : "MISSED"}`,
    `    ours, warm ${mb(sinkRssWarm).padStart(9)}   baseline (createWriteStream), warm ${mb(streamRssWarm)}`,
    `- peak RSS growth, artifact:// page of the 2 GB artifact: ${mb(pageRss)}`,
  ].join("\n"),
);
if (!rssMet) process.exitCode = 1;

await rm(base, { recursive: true, force: true });
