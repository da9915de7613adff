// A capture stored as chunks: its images and documents go to the blob store once, each capture
// of a growing session adds only its new chunks, and a restore writes every file back byte for
// byte (sha256 of each file, computed here from the files on disk).
import { createHash } from "node:crypto";
import { mkdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import { type BlobStore, createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore } from "@stowage/core";
import { realTranscripts, tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { chunkSessionBlob } from "../../src/chunks/chunk-session-blob.js";
import { writeSessionTree } from "../../src/testing/write-session-tree.js";
import { noisyPng, transcriptWithScreenshots } from "./screenshot-transcript.js";

const base = await tempDirectory("stowage-chunked-capture-");
const sessionId = "624a4a58-b34c-462d-a70d-13421c8125a8";
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
// Skipped where the real transcript is absent (a clone without shared/ beside it); realTranscripts
// prints why, and fails in CI.
const real = realTranscripts("chunkSessionBlob (a real Claude Code transcript)");

let cwd: string;

beforeAll(async () => {
  await mkdir(join(base, "work"), { recursive: true });
  cwd = await realpath(join(base, "work"));
});

async function captureOf(configDir: string, transcript: string, blobs?: BlobStore) {
  await writeSessionTree({ configDir, cwd, sessionId, files: new Map([[`${sessionId}.jsonl`, transcript]]) });
  return captureSession({ configDir, cwd, sessionId, ...(blobs ? { blobs } : {}) });
}

describe.skipIf(!real.present)("chunkSessionBlob: a capture stored as chunks", () => {
  it("stores each screenshot once (the Read tool's double copy too) and restores every file byte for byte", async () => {
    const transcript = transcriptWithScreenshots({ lines: 222, every: 11, distinct: 5 });
    const captured = await captureOf(join(base, "source-once"), transcript);
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    const chunked = await chunkSessionBlob(captured, { blobs });
    // 20 reads, each with two copies, of 5 distinct images.
    expect(chunked.payloads).toBe(40);
    const imageBytes = [1, 2, 3, 4, 5].reduce((sum, seed) => sum + noisyPng(seed).byteLength, 0);
    const base64Bytes = [1, 2, 3, 4, 5].reduce(
      (sum, seed) => sum + noisyPng(seed).toString("base64").length,
      0,
    );
    // Each distinct image is read 4 times, 2 copies a read: 8 copies of its base64 in the text.
    const textBytes = Buffer.byteLength(transcript) - 8 * base64Bytes;
    // The images once as bytes, the text compressed (real transcripts compress 5× and more).
    expect(chunked.storedBytes).toBeLessThan(imageBytes + textBytes / 3);
    expect(chunked.storedBytes).toBeLessThan(captured.blobSizeBytes);

    const target = join(base, "restore-once");
    const restored = await restoreSession(chunked, { configDir: target, cwd, blobs });
    expect(restored.format).toBe("chunked");
    const written = await readFile(join(restored.projectDir!, `${sessionId}.jsonl`));
    expect(sha256(written)).toBe(sha256(Buffer.from(transcript)));
  });

  it("captured into a blob store, a follow-up capture of the grown session stores only its new chunks", async () => {
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    const first = transcriptWithScreenshots({ lines: 200, every: 11, distinct: 5 });
    const grown = transcriptWithScreenshots({ lines: 222, every: 11, distinct: 5 });
    expect(grown.startsWith(first)).toBe(true);
    const configDir = join(base, "source-grows");
    const one = await captureOf(configDir, first, blobs);
    const two = await captureOf(configDir, grown, blobs);
    expect(two.manifest.files.map((file) => file.size)).toEqual([Buffer.byteLength(grown)]);
    const added = Buffer.byteLength(grown) - Buffer.byteLength(first);
    // What the second added: the chunks its new lines fell in (about one 64 KiB chunk a cut
    // moved, compressed) and its manifest; never the session again.
    expect(two.storedBytes).toBeLessThan(one.storedBytes / 4);
    expect(two.storedBytes).toBeLessThan(added + 300 * 1024);

    const restored = await restoreSession(two, { configDir: join(base, "restore-grown"), cwd, blobs });
    const written = await readFile(join(restored.projectDir!, `${sessionId}.jsonl`));
    expect(sha256(written)).toBe(sha256(Buffer.from(grown)));
  });
});
