import { createHash } from "node:crypto";
import { type ContentStore, describeValue, parseBlobRef, StowageError, throwIfAborted } from "@stowage/core";
import { encodeArchiveHeader } from "../archive/manifest.js";
import { decompressChunk } from "./chunk-codec.js";
import { archiveManifestOf, type ChunkedFile, type ChunkedSessionManifest } from "./chunked-manifest.js";

/** Chunks and payloads read ahead of the one being written: enough to hide a store's latency. */
const READ_AHEAD = 8;

/** One blob to read: a chunk (decompressed to `size`) or a payload (encoded back to `chars` of base64). */
type Piece = { kind: "chunk"; ref: string; size: number } | { kind: "payload"; ref: string; chars: number };

/** One step of writing a file: part of a chunk, or a payload's text. */
type Step = { piece: number; from: number; to: number };

/** A file's steps, the chunks' text cut where payloads go back in; pieces listed in the order they are needed. */
function planFile(file: ChunkedFile, pieces: Piece[]): Step[] {
  const steps: Step[] = [];
  let textAt = 0;
  let next = 0;
  const payloadStep = () => {
    const { ref, chars } = file.payloads[next++]!;
    pieces.push({ kind: "payload", ref, chars });
    steps.push({ piece: pieces.length - 1, from: 0, to: chars });
  };
  for (const { ref, size } of file.chunks) {
    pieces.push({ kind: "chunk", ref, size });
    const piece = pieces.length - 1;
    let cursor = 0;
    while (next < file.payloads.length && file.payloads[next]!.offset <= textAt + size) {
      const cut = file.payloads[next]!.offset - textAt;
      if (cut > cursor) steps.push({ piece, from: cursor, to: cut });
      cursor = cut;
      payloadStep();
    }
    if (cursor < size) steps.push({ piece, from: cursor, to: size });
    textAt += size;
  }
  while (next < file.payloads.length) payloadStep();
  return steps;
}

function missing(ref: string): StowageError {
  return new StowageError("INTEGRITY", `session blob ${ref} is missing from the content store`, {
    reason: "MISSING_BLOB",
    details: { ref },
  });
}

async function readPiece(content: ContentStore, piece: Piece, signal?: AbortSignal): Promise<Uint8Array> {
  const stored = await content.get(parseBlobRef(piece.ref)!, signal ? { signal } : {});
  if (stored === null) throw missing(piece.ref);
  if (piece.kind === "chunk") return decompressChunk(stored, piece.size, piece.ref);
  const text = Buffer.from(
    Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).toString("base64"),
    "latin1",
  );
  if (text.byteLength !== piece.chars) {
    throw new StowageError(
      "INTEGRITY",
      `session payload ${piece.ref} is ${text.byteLength} characters of base64, not the ${piece.chars} its manifest says`,
      { reason: "CORRUPT_CHUNK", details: { ref: piece.ref } },
    );
  }
  return new Uint8Array(text.buffer, text.byteOffset, text.byteLength);
}

export interface AssembleOptions {
  /** Hash each file as it is rebuilt and compare it with its manifest (INTEGRITY, `SHA256_MISMATCH`). */
  verify: boolean;
  signal?: AbortSignal;
}

/**
 * The bytes a chunked archive stands for, as they are rebuilt: the version 1 archive (its header,
 * then every file) or the compatibility format's one transcript, each file's chunks decompressed
 * and its payloads encoded back where they were. Blobs are read a few ahead, through the content
 * store (which verifies each against its hash); a blob that is gone is INTEGRITY (`MISSING_BLOB`,
 * its ref in `details.ref`), never a file with a hole.
 */
export async function* assembledBytes(
  manifest: ChunkedSessionManifest,
  content: ContentStore,
  options: AssembleOptions,
): AsyncGenerator<Uint8Array> {
  const { signal } = options;
  const pieces: Piece[] = [];
  const plans = manifest.files.map((file) => planFile(file, pieces));
  const lastUse = new Array<number>(pieces.length).fill(-1);
  plans.flat().forEach((step, index) => {
    lastUse[step.piece] = index;
  });
  // One read per payload however often the text holds it (the Read tool's copy of a screenshot).
  const payloadReads = new Map<string, Promise<Uint8Array>>();
  const reads: (Promise<Uint8Array> | undefined)[] = [];
  const readAhead = (upTo: number) => {
    while (reads.length <= Math.min(upTo, pieces.length - 1)) {
      const piece = pieces[reads.length]!;
      let read = piece.kind === "payload" ? payloadReads.get(piece.ref) : undefined;
      if (!read) {
        read = readPiece(content, piece, signal);
        if (piece.kind === "payload") payloadReads.set(piece.ref, read);
      }
      // Awaited in turn below; until then a failure must not count as unhandled.
      read.catch(() => {});
      reads.push(read);
    }
  };
  if (manifest.assembled.form === "archive") yield encodeArchiveHeader(archiveManifestOf(manifest));
  let stepIndex = 0;
  for (const [fileIndex, steps] of plans.entries()) {
    const file = manifest.files[fileIndex]!;
    const hash = options.verify ? createHash("sha256") : undefined;
    for (const step of steps) {
      throwIfAborted(signal, "assemble session archive");
      readAhead(step.piece + READ_AHEAD);
      const bytes = (await reads[step.piece]!).subarray(step.from, step.to);
      if (lastUse[step.piece] === stepIndex) reads[step.piece] = undefined;
      stepIndex++;
      hash?.update(bytes);
      yield bytes;
    }
    if (hash && hash.digest("hex") !== file.sha256) {
      throw new StowageError(
        "INTEGRITY",
        `session file ${describeValue(file.path)} rebuilt from its chunks does not match its sha256`,
        { reason: "SHA256_MISMATCH", details: { path: file.path } },
      );
    }
  }
}
