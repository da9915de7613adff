// Captures to store through the app, and chunked archives a client could send: for the tests of
// what the server keeps as chunks and what it refuses.
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore } from "@stowage/core";
import {
  type CapturedSession,
  type ChunkedSessionBlob,
  captureSession,
  chunkSessionBlob,
  compressChunks,
  decompressBounded,
} from "@stowage/sessions";
import { realisticSessionTree, writeSessionTree } from "@stowage/sessions/testing";

/** A Claude Code session tree of about 200 KB (large enough to be kept as chunks), captured. */
export async function captureClaude(base: string): Promise<CapturedSession> {
  const sessionId = randomUUID();
  const cwd = join(base, `work-${sessionId.slice(0, 8)}`);
  await mkdir(cwd, { recursive: true });
  const configDir = join(base, `config-${sessionId.slice(0, 8)}`);
  const files = realisticSessionTree({ sessionId, cwd, mainBytes: 200_000, screenshotEvery: 0 });
  await writeSessionTree({ configDir, cwd, sessionId, files });
  return captureSession({ configDir, cwd, sessionId });
}

/** A capture kept as chunks in a blob store of the client's own: what the server never saw. */
export async function captureLocalChunked(base: string): Promise<ChunkedSessionBlob> {
  const blobs = createBlobStore({ store: createMemoryObjectStore() });
  const chunked = await chunkSessionBlob(await captureClaude(base), { blobs });
  if (chunked.chunks === 0) throw new Error("the capture was too small to be kept as chunks");
  return chunked;
}

/** Bytes before a chunked archive's manifest: magic (8), version (1), manifest length (4, big-endian). */
const PREAMBLE = 13;

/** `chunked` with its first chunk's ref replaced by `ref`, preamble and compression made again. */
export async function withChunkRef(chunked: ChunkedSessionBlob, ref: unknown): Promise<ChunkedSessionBlob> {
  const parts: Uint8Array[] = [];
  for await (const part of decompressBounded(chunked.blob, chunked.codec, { maxBytes: chunked.rawSizeBytes }))
    parts.push(part);
  const body = Buffer.concat(parts);
  const manifest = JSON.parse(Buffer.from(body.subarray(PREAMBLE)).toString("utf8"));
  manifest.files[0].chunks[0].ref = ref;
  const json = Buffer.from(JSON.stringify(manifest));
  const header = Buffer.alloc(PREAMBLE);
  Buffer.from(body.subarray(0, 9)).copy(header);
  header.writeUInt32BE(json.byteLength, 9);
  const blob = await compressChunks(chunked.codec, [header, json]);
  return { ...chunked, blob, blobSizeBytes: blob.byteLength };
}
