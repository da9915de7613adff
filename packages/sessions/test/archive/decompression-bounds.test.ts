import { gzipSync } from "node:zlib";
import type { StowageErrorCode } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { MAX_JSONL_LINE_CHARS } from "../../src/archive/jsonl-checker.js";
import type { SessionArchive } from "../../src/archive/session-archive.js";
import { verifySessionBlob } from "../../src/archive/verify-session-blob.js";
import { buildArchive } from "../build-archive.js";

const sessionId = "6b7c8d9e-0f1a-4b2c-8d3e-4f5a6b7c8d9e";
const MiB = 1024 * 1024;
const entry = (text: string) =>
  `${JSON.stringify({ type: "user", sessionId, message: { content: text } })}\n`;

function gzipBlob(text: string | Buffer, rawSizeBytes: number): SessionArchive {
  return { sessionId, codec: "gzip", blob: gzipSync(text), rawSizeBytes };
}

/** The size a one-member gzip blob records in its trailer: what a sender that gives none is taken to mean. */
const trailerSized = (text: string | Buffer) => gzipBlob(text, Buffer.byteLength(text) % 2 ** 32);

// Hostile blobs small when compressed. Each row: what it is, the blob, the limit the reader is
// given, and the error it must end with. The error tells which bound stopped it: past a recorded
// size (INTEGRITY, RAW_SIZE_MISMATCH) the reader stopped at that size, not at maxBytes.
const HOSTILE: ReadonlyArray<[string, () => SessionArchive, number, StowageErrorCode, string]> = [
  [
    "8 MiB of zeros recorded as 100 bytes",
    () => gzipBlob(Buffer.alloc(8 * MiB), 100),
    4 * MiB,
    "INTEGRITY",
    "RAW_SIZE_MISMATCH",
  ],
  [
    "valid lines, 8 MiB of them, recorded as one line's size",
    () => gzipBlob(entry("x").repeat(Math.ceil((8 * MiB) / entry("x").length)), entry("x").length),
    4 * MiB,
    "INTEGRITY",
    "RAW_SIZE_MISMATCH",
  ],
  [
    "a stream with no newline, longer than a line may be, recorded with its own trailer's size",
    () => trailerSized(Buffer.alloc(MAX_JSONL_LINE_CHARS + MiB, "a")),
    256 * MiB,
    "TOO_LARGE",
    "JSONL_LINE_TOO_LARGE",
  ],
  [
    "a JSON line longer than a line may be",
    () => trailerSized(entry("y".repeat(MAX_JSONL_LINE_CHARS))),
    256 * MiB,
    "TOO_LARGE",
    "JSONL_LINE_TOO_LARGE",
  ],
  [
    "more than maxBytes, recorded with its own trailer's size",
    () => trailerSized(entry("z").repeat(Math.ceil((8 * MiB) / entry("z").length))),
    4 * MiB,
    "TOO_LARGE",
    "DECOMPRESSED_TOO_LARGE",
  ],
];

describe("a session blob is refused at the first bound it passes", () => {
  it.each(HOSTILE)("%s", async (_what, make, maxBytes, code, reason) => {
    await expectStowageError(verifySessionBlob(make(), { maxBytes }), code, reason);
  });

  it("takes a line exactly as long as a line may be", async () => {
    const text = entry("");
    const padding = MAX_JSONL_LINE_CHARS - text.length + 1; // the newline is not part of the line
    const line = entry("w".repeat(padding));
    expect(line.length - 1).toBe(MAX_JSONL_LINE_CHARS);
    expect(await verifySessionBlob(trailerSized(line), { maxBytes: 256 * MiB })).toMatchObject({
      format: "jsonl",
      rawSizeBytes: line.length,
    });
  });
});

describe("bytes the decompression does not account for are refused", () => {
  const archiveOf = (codec: "gzip" | "brotli") =>
    buildArchive({
      sessionId,
      codec,
      files: [{ path: `${sessionId}.jsonl`, content: new TextEncoder().encode(entry("kept")) }],
    });
  const withTail = (archive: SessionArchive, tail: Uint8Array, rawSizeBytes = archive.rawSizeBytes) => ({
    ...archive,
    blob: Buffer.concat([archive.blob, tail]),
    rawSizeBytes,
  });

  it.each([
    ["brotli data followed by 1 MiB of other bytes", "brotli", Buffer.alloc(MiB, 7)],
    ["gzip data followed by zeros", "gzip", Buffer.alloc(4096)],
  ] as const)("%s: INTEGRITY, CORRUPT_BLOB", async (_what, codec, tail) => {
    const archive = await archiveOf(codec);
    expect(await verifySessionBlob(archive)).toMatchObject({ format: "archive" });
    await expectStowageError(verifySessionBlob(withTail(archive, tail)), "INTEGRITY", "CORRUPT_BLOB");
  });

  it("an archive followed by a second gzip member, recorded with that member's size, is refused by its manifest", async () => {
    // The gzip-trailer exception is the compatibility format's; the manifest says the archive is
    // larger than recorded, which is enough to refuse it before any file is decompressed.
    const archive = await archiveOf("gzip");
    const blob = withTail(archive, gzipSync("x"), 1);
    await expectStowageError(verifySessionBlob(blob), "INTEGRITY", "RAW_SIZE_MISMATCH");
  });
});
