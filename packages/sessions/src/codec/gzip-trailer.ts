import { StowageError } from "@stowage/core";

/**
 * The decompressed size a gzip blob's last member records in its last four bytes (ISIZE,
 * little-endian; RFC 1952): the whole size when the blob is one member, as the session-persistence
 * design's senders write it. A blob of several members (gzip output appended to gzip output)
 * records only its last member's. INTEGRITY when the bytes are not gzip at all (no `1f 8b` magic,
 * shorter than a member).
 */
export function gzipTrailerSize(blob: Uint8Array): number {
  if (blob.byteLength < 18 || blob[0] !== 0x1f || blob[1] !== 0x8b) {
    throw new StowageError("INTEGRITY", "sessionBlob is not gzip data (no gzip header)", {
      reason: "CORRUPT_BLOB",
      details: { codec: "gzip" },
    });
  }
  return new DataView(blob.buffer, blob.byteOffset, blob.byteLength).getUint32(blob.byteLength - 4, true);
}
