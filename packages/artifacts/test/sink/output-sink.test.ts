import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { StowageError } from "@stowage/core";
import { expectStowageError, recordingLogger } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it, vi } from "vitest";
import { CLAIMS_DIR_NAME } from "../../src/ids/claims.js";
import {
  type ArtifactWriterSource,
  createOutputSink,
  DEFAULT_SPILL_BYTES,
  MAX_SINK_BUFFERED_BYTES,
  SINK_HIGH_WATER_BYTES,
} from "../../src/sink/output-sink.js";
import { type ArtifactStore, createArtifactStore } from "../../src/store/artifact-store.js";
import type { ArtifactWriter } from "../../src/store/artifact-writer.js";
import { createInternalUrlRouter } from "../../src/urls/router.js";
import { openFdCount } from "../helpers.js";

const base = await tempDirectory("stowage-artifacts-sink-");
let count = 0;
const freshStore = () => createArtifactStore({ dir: join(base, `dir-${count++}`), logger: quiet });
const { logger: quiet, warnings } = recordingLogger();

const lines = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `line ${from + i} ${"x".repeat((from + i) % 50)}\n`).join("");

async function artifactFiles(store: ArtifactStore): Promise<string[]> {
  return (await readdir(store.dir).catch(() => [] as string[]))
    .filter((name) => name !== CLAIMS_DIR_NAME)
    .sort();
}

/** A real artifact store whose writes wait until `release()`: a disk that has fallen behind. */
function stalledStore(store: ArtifactStore): ArtifactWriterSource & { release(): void; writes: number } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const source = {
    writes: 0,
    release,
    async openArtifactWriter(toolType: string): Promise<ArtifactWriter> {
      const writer = await store.openArtifactWriter(toolType);
      return {
        get id() {
          return writer.id;
        },
        get toolType() {
          return writer.toolType;
        },
        get path() {
          return writer.path;
        },
        get bytesWritten() {
          return writer.bytesWritten;
        },
        async write(chunks) {
          source.writes++;
          await released;
          return writer.write(chunks);
        },
        publish: () => writer.publish(),
        abandon: () => writer.abandon(),
      };
    },
  };
  return source;
}

describe("OutputSink below the spill threshold", () => {
  it("keeps everything in memory and creates no artifact", async () => {
    const store = freshStore();
    const sink = createOutputSink({ artifacts: store, toolType: "bash" });
    await sink.push("hello\n");
    await sink.push(new TextEncoder().encode("world"));
    const summary = await sink.dump();
    expect(summary).toEqual({ text: "hello\nworld", truncated: false, totalBytes: 11, totalLines: 2 });
    expect(await artifactFiles(store)).toEqual([]);
    await sink.dispose();
  });

  it("counts lines: newlines, plus a last line without one", async () => {
    for (const [text, expected] of [
      ["", 0],
      ["a", 1],
      ["a\n", 1],
      ["a\nb", 2],
      ["\n\n", 2],
    ] as const) {
      const sink = createOutputSink();
      await sink.push(text);
      expect((await sink.dump()).totalLines).toBe(expected);
    }
  });
});

describe("OutputSink past the spill threshold", () => {
  it("writes the whole output once to <id>.<tool>.log and returns the tail", async () => {
    const store = freshStore();
    const sink = createOutputSink({ artifacts: store, toolType: "bash", spillBytes: 1000 });
    const text = lines(0, 500);
    // Pushed in uneven pieces, mixing strings and bytes.
    for (let at = 0; at < text.length; at += 97) {
      const piece = text.slice(at, at + 97);
      await sink.push(at % 2 ? piece : new TextEncoder().encode(piece));
    }
    const summary = await sink.dump();
    expect(summary.artifactId).toBe("0");
    expect(summary.truncated).toBe(true);
    expect(summary.totalBytes).toBe(Buffer.byteLength(text));
    expect(summary.totalLines).toBe(500);
    expect(text.endsWith(summary.text)).toBe(true);
    expect(Buffer.byteLength(summary.text)).toBe(1000);
    expect(await readFile(join(store.dir, "0.bash.log"), "utf8")).toBe(text);
    expect(await artifactFiles(store)).toEqual(["0.bash.log"]);
    await sink.dispose();
    expect(await readFile(join(store.dir, "0.bash.log"), "utf8")).toBe(text);
  });

  it("uses DEFAULT_SPILL_BYTES (50 KB) by default", async () => {
    const store = freshStore();
    const sink = createOutputSink({ artifacts: store });
    await sink.push(new Uint8Array(DEFAULT_SPILL_BYTES).fill(0x61));
    expect(sink.artifactId).toBeUndefined();
    await sink.push("b");
    const summary = await sink.dump();
    expect(summary.artifactId).toBe("0");
    expect(summary.text).toBe(`${"a".repeat(DEFAULT_SPILL_BYTES - 1)}b`);
    expect(await artifactFiles(store)).toEqual(["0.tool.log"]);
  });

  it("accepts a WritableStream input with backpressure (stdout and stderr may share the sink)", async () => {
    const store = freshStore();
    const sink = createOutputSink({ artifacts: store, toolType: "python", spillBytes: 64 });
    const source = (prefix: string) =>
      new ReadableStream<string>({
        start(controller) {
          for (let i = 0; i < 50; i++) controller.enqueue(`${prefix} ${i}\n`);
          controller.close();
        },
      });
    await source("out").pipeTo(sink.writable());
    await source("err").pipeTo(sink.writable());
    const summary = await sink.dump();
    const full = await readFile(join(store.dir, `${summary.artifactId}.python.log`), "utf8");
    expect(full.split("\n").filter(Boolean)).toHaveLength(100);
    expect(full.startsWith("out 0\nout 1\n")).toBe(true);
    expect(full.endsWith("err 49\n")).toBe(true);
  });

  it("publishes on dump: while the tool runs, artifact:// says it is still being written", async () => {
    const store = freshStore();
    const router = createInternalUrlRouter({ artifacts: store });
    const sink = createOutputSink({ artifacts: store, toolType: "bash", spillBytes: 10 });
    await sink.push("first part of the output\n");
    // The spill file is written in the background; wait for it (however loaded the machine is).
    await vi.waitFor(
      async () => {
        expect(sink.artifactId).toBe("0");
        const partial = await router.read("artifact://0", { allowIncomplete: true });
        expect(partial).toMatchObject({ complete: false, text: "first part of the output\n" });
      },
      { timeout: 30_000, interval: 10 },
    );
    const err = await router.read("artifact://0").catch((error: unknown) => error);
    expect(StowageError.is(err, "UNAVAILABLE")).toBe(true);
    expect((err as StowageError).reason).toBe("ARTIFACT_INCOMPLETE");
    await sink.push("second part\n");
    await sink.dump();
    const done = await router.read("artifact://0");
    expect(done).toMatchObject({ complete: true, text: "first part of the output\nsecond part\n" });
  });

  it("keeps the tail and records artifactError without a store", async () => {
    const sink = createOutputSink({ spillBytes: 8, logger: quiet });
    await sink.push("0123456789abcdef");
    const summary = await sink.dump();
    expect(summary.text).toBe("89abcdef");
    expect(summary.truncated).toBe(true);
    expect(summary.artifactId).toBeUndefined();
    expect(summary.artifactError?.reason).toBe("NO_ARTIFACT_STORE");
  });
});

describe("OutputSink sanitizes what the model sees", () => {
  const ESC = "\u001b";

  it("the summary has no escape sequences, NUL, BEL or invalid UTF-8; the artifact keeps the raw bytes", async () => {
    const store = freshStore();
    const sink = createOutputSink({ artifacts: store, toolType: "bash", spillBytes: 64 });
    const raw = [
      new TextEncoder().encode(`${ESC}[1;32mPASS${ESC}[0m test one\u0000\u0007\r\n`),
      new Uint8Array([0x62, 0x61, 0x64, 0xff, 0xfe, 0x0a]), // "bad", two invalid bytes, newline
      new TextEncoder().encode(`${ESC}]0;title\u0007${ESC}[31mFAIL${ESC}[0m test two\n`),
    ];
    for (const chunk of raw) await sink.push(chunk);
    const summary = await sink.dump();
    // 67 raw bytes, a tail of 64 that starts inside the first color code: the model sees every word.
    expect(summary.truncated).toBe(true);
    expect(summary.text).toBe("PASS test one\nbad\ufffd\ufffd\nFAIL test two\n");
    expect(summary.totalBytes).toBe(raw.reduce((sum, chunk) => sum + chunk.byteLength, 0));
    const file = await readFile(join(store.dir, `${summary.artifactId}.bash.log`));
    expect(new Uint8Array(file)).toEqual(new Uint8Array(Buffer.concat(raw)));
    const router = createInternalUrlRouter({ artifacts: store });
    expect((await router.read(`artifact://${summary.artifactId}`)).text).toBe(
      "PASS test one\nbad\ufffd\ufffd\nFAIL test two\n",
    );
    expect((await router.read(`artifact://${summary.artifactId}`, { raw: true })).text).toContain(
      `${ESC}[31m`,
    );
  });

  it("a tail cut through an escape sequence starts after it, not with its fragment", async () => {
    const sink = createOutputSink({ spillBytes: 16, logger: quiet });
    await sink.push(`${"x".repeat(20)}${ESC}[38;5;196m`);
    await sink.push("0123456789");
    // The last 16 bytes begin inside "[38;5;196m": the model sees only the digits.
    expect((await sink.dump()).text).toBe("0123456789");
  });

  it("a 50 KiB tail cut deep inside a long OSC (an inline image) shows none of its payload", async () => {
    const sink = createOutputSink({ logger: quiet });
    // iTerm2's inline image: ESC ] 1337 ; File=… : <base64> BEL, 200 KB in 64 KiB chunks.
    const image = `${ESC}]1337;File=inline=1:${"QUJD".repeat(50_000)}\u0007`;
    const raw = new TextEncoder().encode(`before\n${image}TTtail-visible\n`);
    for (let at = 0; at < raw.byteLength; at += 65_536) await sink.push(raw.subarray(at, at + 65_536));
    const summary = await sink.dump();
    expect(summary.truncated).toBe(true);
    expect(summary.text).toBe("TTtail-visible\n");
  });

  it("a 16-byte tail inside a 300-byte OSC title drops the title's last bytes too (no TT residue)", async () => {
    const sink = createOutputSink({ spillBytes: 16, logger: quiet });
    await sink.push(`${"x".repeat(40)}${ESC}]0;${"T".repeat(300)}\u0007tail-visible\n`);
    expect((await sink.dump()).text).toBe("tail-visible\n");
  });

  it("a tail that starts inside an OSC that never ends on its line starts at that line's end", async () => {
    const sink = createOutputSink({ spillBytes: 1024, logger: quiet });
    await sink.push(`${ESC}]0;${"t".repeat(5000)}`);
    await sink.push(`${"u".repeat(500)}\nnext line\n`);
    expect((await sink.dump()).text).toBe("\nnext line\n");
  });
});

describe("OutputSink failures never reach the tool", () => {
  it("falls back to the tail when the artifacts directory cannot be created", async () => {
    const blocker = join(base, `blocker-${count++}`);
    await writeFile(blocker, "a file where a directory should be");
    const store = createArtifactStore({ dir: join(blocker, "session"), logger: quiet });
    const sink = createOutputSink({ artifacts: store, toolType: "bash", spillBytes: 16, logger: quiet });
    for (let i = 0; i < 100; i++) await sink.push(`line ${i}\n`);
    const summary = await sink.dump();
    expect(summary.artifactId).toBeUndefined();
    expect(summary.truncated).toBe(true);
    expect(summary.text.endsWith("line 99\n")).toBe(true);
    expect(summary.artifactError?.code).toBe("CONFLICT");
    expect(sink.artifactError).toBe(summary.artifactError);
    expect(warnings.some((warning) => warning.message.includes("only the tail"))).toBe(true);
  });

  it("ignores chunks that are neither bytes nor text, and pushes after dump", async () => {
    const sink = createOutputSink({ logger: quiet });
    await sink.push(42 as unknown as string);
    await sink.push({} as unknown as string);
    await sink.push(new Uint16Array([0x6968]) as unknown as Uint8Array); // any typed array is bytes
    const summary = await sink.dump();
    expect(summary.totalBytes).toBe(2);
    await sink.push("late");
    expect((await sink.dump()).totalBytes).toBe(2);
  });

  it("survives a logger that throws", async () => {
    const blocker = join(base, `blocker-${count++}`);
    await writeFile(blocker, "x");
    const throwing = {
      warn: () => {
        throw new Error("logger broke");
      },
    };
    const store = createArtifactStore({ dir: join(blocker, "session"), logger: throwing });
    const sink = createOutputSink({ artifacts: store, spillBytes: 4, logger: throwing });
    for (let i = 0; i < 20; i++) await sink.push(`chunk ${i}\n`);
    await sink.push(7 as unknown as string);
    const summary = await sink.dump();
    await sink.push("late");
    expect(summary.artifactError?.code).toBe("CONFLICT");
    expect(summary.text).toBe(" 19\n");
  });

  it("rejects bad options at construction, not later", async () => {
    for (const spillBytes of [0, -1, 1.5, Number.NaN, 2 ** 40]) {
      await expectStowageError(() => createOutputSink({ spillBytes }), "INVALID_INPUT");
    }
    expect(() => createOutputSink(null as never)).not.toThrow();
  });

  it("applies backpressure: push() waits while the disk is behind", async () => {
    const store = freshStore();
    const stalled = stalledStore(store);
    const sink = createOutputSink({ artifacts: stalled, toolType: "bash", spillBytes: 1024 });
    const chunk = new Uint8Array(1024 * 1024).fill(0x62);
    let pushed = 0;
    let waiting: Promise<void> | undefined;
    for (; pushed < 32; pushed++) {
      const accepted = sink.push(chunk);
      const settled = await Promise.race([
        accepted.then(() => true),
        new Promise((r) => setTimeout(r, 10, false)),
      ]);
      if (!settled) {
        waiting = accepted;
        break;
      }
    }
    expect(waiting).toBeDefined();
    // At most one batch being written plus one queue's worth waiting.
    expect(pushed).toBeLessThanOrEqual((2 * SINK_HIGH_WATER_BYTES) / chunk.byteLength + 1);
    stalled.release();
    await waiting;
    const summary = await sink.dump();
    expect(summary.artifactId).toBe("0");
    expect((await readFile(join(store.dir, "0.bash.log"))).byteLength).toBe((pushed + 1) * chunk.byteLength);
  });

  it("gives the artifact up, memory bounded, when a producer ignores backpressure", async () => {
    const store = freshStore();
    const stalled = stalledStore(store);
    const sink = createOutputSink({ artifacts: stalled, toolType: "bash", spillBytes: 1024, logger: quiet });
    const chunk = new Uint8Array(1024 * 1024).fill(0x63);
    for (let i = 0; i < MAX_SINK_BUFFERED_BYTES / chunk.byteLength + 4; i++) void sink.push(chunk);
    expect(sink.artifactError?.reason).toBe("BACKPRESSURE_IGNORED");
    expect(sink.artifactError?.details?.limit).toBe(64 * 1024 * 1024);
    stalled.release();
    const summary = await sink.dump();
    expect(summary.artifactId).toBeUndefined();
    expect(summary.artifactError?.code).toBe("TOO_LARGE");
    expect(summary.text).toHaveLength(1024);
    expect(await artifactFiles(store)).toEqual([]);
  });

  it("accepts one chunk larger than the buffer limit from a producer that awaits", async () => {
    const store = freshStore();
    const sink = createOutputSink({ artifacts: store, toolType: "bash", spillBytes: 1024, logger: quiet });
    await sink.push("head\n");
    await sink.push(new Uint8Array(MAX_SINK_BUFFERED_BYTES + 1024 * 1024).fill(0x64));
    await sink.push("tail\n");
    const summary = await sink.dump();
    expect(summary.artifactError).toBeUndefined();
    expect(summary.artifactId).toBe("0");
    expect((await readFile(join(store.dir, "0.bash.log"))).byteLength).toBe(
      MAX_SINK_BUFFERED_BYTES + 1024 * 1024 + 10,
    );
  });
});

describe("OutputSink.dispose", () => {
  it("always releases the file descriptor, on every path", async () => {
    const before = await openFdCount();
    const store = freshStore();
    // Finished normally.
    const done = createOutputSink({ artifacts: store, spillBytes: 4 });
    await done.push("0123456789");
    await done.dump();
    await done.dispose();
    // Disposed without dump: the unfinished artifact is removed.
    const abandoned = createOutputSink({ artifacts: store, spillBytes: 4 });
    await abandoned.push("0123456789");
    await abandoned.dispose();
    // Disposed while the file is still being created.
    const early = createOutputSink({ artifacts: store, spillBytes: 4 });
    void early.push("0123456789");
    await early.dispose();
    // Write failure.
    const stalled = stalledStore(store);
    const failing = createOutputSink({ artifacts: stalled, spillBytes: 4, logger: quiet });
    for (let i = 0; i < 80; i++) void failing.push(new Uint8Array(1024 * 1024));
    stalled.release();
    await failing.dispose();
    expect(await openFdCount()).toBe(before);
    expect(await artifactFiles(store)).toEqual(["0.tool.log"]);
    expect((await abandoned.dump()).artifactError?.reason).toBe("DISPOSED");
  });

  it("after dump does nothing, and dispose then dump returns no artifact", async () => {
    const store = freshStore();
    const sink = createOutputSink({ artifacts: store, spillBytes: 4 });
    await sink.push("0123456789");
    const summary = await sink.dump();
    await sink.dispose();
    await sink.dispose();
    expect(await sink.dump()).toEqual(summary);
    expect(await artifactFiles(store)).toEqual(["0.tool.log"]);
  });
});
