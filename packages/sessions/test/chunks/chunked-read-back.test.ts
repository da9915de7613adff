// A chunked capture read back every way a caller meets it: assembled into the blob the design
// document's wire format carries, restored from a compatibility-format transcript or a real
// Codex rollout, checked without its chunks, stored in a repository, and refused with a typed
// error when its chunks are not given or one is gone.
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { REAL_TRANSCRIPTS_DIR, realTranscripts, tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { readSessionFiles } from "../../src/archive/read-session-files.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { verifySessionBlob } from "../../src/archive/verify-session-blob.js";
import { assembleSessionBlob } from "../../src/chunks/assemble-session-blob.js";
import { chunkSessionBlob } from "../../src/chunks/chunk-session-blob.js";
import { createMemorySessionBlobRepository } from "../../src/repository/memory-session-blobs.js";
import { writeSessionTree } from "../../src/testing/write-session-tree.js";
import { transcriptWithScreenshots } from "./screenshot-transcript.js";

const base = await tempDirectory("stowage-chunked-read-");
const sessionId = "624a4a58-b34c-462d-a70d-13421c8125a8";
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");
// Skipped where the real transcript is absent (a clone without shared/ beside it); realTranscripts
// prints why, and fails in CI.
const real = realTranscripts("a chunked capture read back (a real Claude Code transcript)");
const transcript = real.present ? transcriptWithScreenshots({ lines: 120, every: 10, distinct: 3 }) : "";

let cwd: string;
let captured: Awaited<ReturnType<typeof captureSession>>;

beforeAll(async () => {
  await mkdir(join(base, "work"), { recursive: true });
  cwd = await realpath(join(base, "work"));
  const configDir = join(base, "source");
  await writeSessionTree({ configDir, cwd, sessionId, files: new Map([[`${sessionId}.jsonl`, transcript]]) });
  captured = await captureSession({ configDir, cwd, sessionId });
});

function newBlobs() {
  return createBlobStore({ store: createMemoryObjectStore() });
}

describe.skipIf(!real.present)("a chunked capture read back", () => {
  it("assembles into the archive it was made from, which restores without its chunks", async () => {
    const blobs = newBlobs();
    const chunked = await chunkSessionBlob(captured, { blobs });
    const assembled = await assembleSessionBlob(chunked, { blobs });
    expect(assembled.codec).toBe(captured.codec);
    expect(assembled.rawSizeBytes).toBe(captured.rawSizeBytes);
    const restored = await restoreSession(assembled, { configDir: join(base, "assembled"), cwd });
    expect(restored.format).toBe("archive");
    expect(sha256(await readFile(join(restored.projectDir!, `${sessionId}.jsonl`)))).toBe(sha256(transcript));
  });

  it("a blob that is not chunked is assembled as it is", async () => {
    const assembled = await assembleSessionBlob(captured, { blobs: newBlobs() });
    expect(assembled.blob).toBe(captured.blob);
  });

  it("the compatibility format's gzipped transcript: chunked, restored and assembled back to gzip JSONL", async () => {
    const blobs = newBlobs();
    const compat = {
      sessionId,
      codec: "gzip" as const,
      blob: gzipSync(transcript),
      rawSizeBytes: Buffer.byteLength(transcript),
    };
    const chunked = await chunkSessionBlob(compat, { blobs });
    const restored = await restoreSession(chunked, { configDir: join(base, "compat"), cwd, blobs });
    expect(sha256(await readFile(join(restored.projectDir!, `${sessionId}.jsonl`)))).toBe(sha256(transcript));
    const assembled = await assembleSessionBlob(chunked, { blobs });
    expect(assembled.codec).toBe("gzip");
    expect(sha256(gunzipSync(assembled.blob))).toBe(sha256(transcript));
  });

  it("a real Codex rollout restores byte for byte into its day folder", async () => {
    const name = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl";
    const rollout = await readFile(join(REAL_TRANSCRIPTS_DIR, "codex", name));
    const codexHome = join(base, "codex-source");
    await mkdir(join(codexHome, "sessions", "2026", "05", "11"), { recursive: true });
    await writeFile(join(codexHome, "sessions", "2026", "05", "11", name), rollout);
    const codexCapture = await captureSession({
      agent: "codex",
      sessionId: "019e1625-789d-76c0-80ab-3724b5ddb799",
      codexHome,
    });
    const blobs = newBlobs();
    const chunked = await chunkSessionBlob(codexCapture, { blobs });
    const target = join(base, "codex-target");
    const restored = await restoreSession(chunked, { codexHome: target, blobs });
    expect(await readdir(restored.directory!)).toEqual([name]);
    expect(sha256(await readFile(restored.transcriptPath!))).toBe(sha256(rollout));
  });

  it("is checked by its manifest alone without its chunks, and read through with them", async () => {
    const blobs = newBlobs();
    const chunked = await chunkSessionBlob(captured, { blobs });
    const alone = await verifySessionBlob(chunked);
    expect(alone).toMatchObject({ format: "chunked", rawSizeBytes: captured.rawSizeBytes });
    expect(alone.manifest.files).toEqual(captured.manifest.files);
    const read = await readSessionFiles(chunked, { blobs });
    expect(sha256(read.files.get(`${sessionId}.jsonl`)!)).toBe(sha256(transcript));
    await expectStowageError(
      verifySessionBlob(chunked, { agent: "codex" }),
      "INVALID_INPUT",
      "AGENT_MISMATCH",
    );
  });

  it("a session of a few lines, whose manifest would outweigh it, is kept as one archive", async () => {
    const configDir = join(base, "tiny");
    const line = `${JSON.stringify({ type: "user", sessionId, message: { role: "user", content: "hi" } })}\n`;
    await writeSessionTree({ configDir, cwd, sessionId, files: new Map([[`${sessionId}.jsonl`, line]]) });
    const tiny = await captureSession({ configDir, cwd, sessionId, blobs: newBlobs() });
    expect(tiny.storedBytes).toBe(tiny.blobSizeBytes);
    const restored = await restoreSession(tiny, { configDir: join(base, "tiny-target"), cwd });
    expect(restored.format).toBe("archive");
    expect(await readFile(join(restored.projectDir!, `${sessionId}.jsonl`), "utf8")).toBe(line);
  });

  it("a repository stores it as any blob", async () => {
    const chunked = await chunkSessionBlob(captured, { blobs: newBlobs() });
    const repository = createMemorySessionBlobRepository();
    const record = await repository.create({
      ...chunked,
      owner: "user-alice",
      requestId: "req-1",
      agentType: "claude-code",
    });
    expect(record.blobSizeBytes).toBe(chunked.blob.byteLength);
    expect(record.rawSizeBytes).toBe(captured.rawSizeBytes);
  });

  it("without its content store: INVALID_INPUT (CHUNKED_BLOB), nothing written", async () => {
    const chunked = await chunkSessionBlob(captured, { blobs: newBlobs() });
    const target = join(base, "no-blobs");
    await expectStowageError(
      restoreSession(chunked, { configDir: target, cwd }),
      "INVALID_INPUT",
      "CHUNKED_BLOB",
    );
    await expectStowageError(readSessionFiles(chunked), "INVALID_INPUT", "CHUNKED_BLOB");
    await expect(readdir(target)).rejects.toMatchObject({ code: "ENOENT" });
    await expectStowageError(
      chunkSessionBlob(chunked, { blobs: newBlobs() }),
      "INVALID_INPUT",
      "CHUNKED_BLOB",
    );
  });

  it("a chunk or payload gone from the store: INTEGRITY (MISSING_BLOB) naming it, never a file with a hole", async () => {
    const store = createMemoryObjectStore();
    const blobs = createBlobStore({ store });
    const chunked = await chunkSessionBlob(captured, { blobs });
    const refs: string[] = [];
    for await (const info of blobs.iterate()) refs.push(info.ref);
    const gone = refs.at(-1)!;
    await blobs.delete(gone);
    const target = join(base, "missing");
    const err = await expectStowageError(
      restoreSession(chunked, { configDir: target, cwd, blobs }),
      "INTEGRITY",
      "MISSING_BLOB",
    );
    expect(err.details).toMatchObject({ ref: gone });
    const transcriptPath = join(target, "projects", captured.projectKey!, `${sessionId}.jsonl`);
    await expect(readFile(transcriptPath)).rejects.toMatchObject({ code: "ENOENT" });
    await expectStowageError(assembleSessionBlob(chunked, { blobs }), "INTEGRITY", "MISSING_BLOB");
  });
});
