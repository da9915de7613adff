import {
  type ContentPutResult,
  type ContentStore,
  formatBlobRef,
  mapConcurrent,
  StowageError,
  sha256Hex,
} from "@stowage/core";
import type { SessionArchiveEntry } from "../archive/manifest.js";
import type { ChunkedFile, StoredChunk, StoredPayload } from "./chunked-manifest.js";
import { type EmbeddedPayload, findEmbeddedPayloads } from "./embedded-payloads.js";
import { lineChunkEnds } from "./line-chunks.js";
import { chunkMemoryOf } from "./remembered-chunks.js";

/** Chunks compressed and stored at once: enough to keep every core and the store busy. */
const STORE_CONCURRENCY = 8;

export interface StoreChunksOptions {
  /** Where chunks and payloads go (a principal's blobs). */
  content: ContentStore;
  /** Take image and document payloads out of the text and store each apart. */
  payloads: boolean;
  signal?: AbortSignal;
}

/** A file of the session as captured: what its manifest entry says, and its bytes. */
export interface SessionFileBytes {
  entry: SessionArchiveEntry;
  bytes: Uint8Array;
}

/** What storing a session's files did. */
export interface StoredSessionFiles {
  files: ChunkedFile[];
  /** Bytes the content store did not hold before (new to its owner): what this capture added. */
  storedBytes: number;
  chunks: number;
  payloads: number;
}

/** The file's text without its payloads, and where each payload was in that text. */
function takePayloadsOut(bytes: Uint8Array, found: EmbeddedPayload[]) {
  if (found.length === 0) return { text: bytes, offsets: [] as number[] };
  const removed = found.reduce((sum, payload) => sum + payload.end - payload.start, 0);
  const text = new Uint8Array(bytes.byteLength - removed);
  const offsets: number[] = [];
  let from = 0;
  let to = 0;
  for (const payload of found) {
    text.set(bytes.subarray(from, payload.start), to);
    to += payload.start - from;
    offsets.push(to);
    from = payload.end;
  }
  text.set(bytes.subarray(from), to);
  return { text, offsets };
}

type Job =
  | { kind: "chunk"; file: number; bytes: Uint8Array }
  | { kind: "payload"; file: number; bytes: Uint8Array; offset: number; chars: number };

/**
 * Stores a session's files in `content` as chunks cut at line ends (each compressed, stored once
 * however many files or captures hold it) and, unless told not to, their image and document
 * payloads apart (each once, as the bytes the base64 decodes to). Every blob is durable when this
 * returns, and each `put` refreshed what was already there, so that a garbage collection running
 * meanwhile keeps it (see `@stowage/blob-store`): the manifest that references them is written
 * after. What is stored is reported by the content store: `storedBytes` counts what was new to it.
 */
export async function storeSessionFiles(
  inputs: readonly SessionFileBytes[],
  options: StoreChunksOptions,
): Promise<StoredSessionFiles> {
  const { content, signal } = options;
  const jobs: Job[] = [];
  for (const [file, { bytes }] of inputs.entries()) {
    const found = options.payloads ? findEmbeddedPayloads(bytes) : [];
    const { text, offsets } = takePayloadsOut(bytes, found);
    let start = 0;
    for (const end of lineChunkEnds(text)) {
      jobs.push({ kind: "chunk", file, bytes: text.subarray(start, end) });
      start = end;
    }
    for (const [index, payload] of found.entries()) {
      const chars = payload.end - payload.start;
      jobs.push({ kind: "payload", file, bytes: payload.bytes, offset: offsets[index]!, chars });
    }
  }
  // The same bytes twice in one capture (a screenshot and the Read tool's copy of it) are put once.
  const puts = new Map<string, Promise<ContentPutResult>>();
  let storedBytes = 0;
  const putOnce = async (bytes: Uint8Array): Promise<string> => {
    const hash = sha256Hex(bytes);
    let put = puts.get(hash);
    if (!put) {
      put = content.put(bytes, signal ? { signal } : {}).then((result) => {
        if (result.hash !== hash) {
          throw new StowageError("INTERNAL", `the content store filed ${hash} as ${result.hash}`);
        }
        if (result.created) storedBytes += result.size;
        return result;
      });
      puts.set(hash, put);
    }
    return formatBlobRef((await put).hash);
  };
  // A follow-up in this process finds the chunks of the capture before compressed already.
  const memory = chunkMemoryOf(content);
  const refs = await mapConcurrent(
    jobs,
    STORE_CONCURRENCY,
    async (job) => putOnce(job.kind === "chunk" ? await memory.compress(job.bytes) : job.bytes),
    signal,
  );
  const chunks: StoredChunk[][] = inputs.map(() => []);
  const payloads: StoredPayload[][] = inputs.map(() => []);
  for (const [index, job] of jobs.entries()) {
    const ref = refs[index]!;
    if (job.kind === "chunk") chunks[job.file]!.push({ ref, size: job.bytes.byteLength });
    else payloads[job.file]!.push({ offset: job.offset, ref, chars: job.chars });
  }
  return {
    files: inputs.map(({ entry }, file) => ({ ...entry, chunks: chunks[file]!, payloads: payloads[file]! })),
    storedBytes,
    chunks: jobs.filter((job) => job.kind === "chunk").length,
    payloads: jobs.length - jobs.filter((job) => job.kind === "chunk").length,
  };
}
