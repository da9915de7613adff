import type { DirectoryLocation } from "../layout/directory-access.js";
import type { DirectoryListingCache } from "../layout/listing-cache.js";
import { assertAgentOutputId, assertArtifactId } from "../layout/names.js";
import type { OpenedRegularFile } from "../read/open-regular-file.js";
import { type ByteRange, type ByteRangeOptions, checkByteRangeOptions } from "../read/read-options.js";
import { readByteRange } from "../read/read-range.js";
import { openAgentOutput } from "./read-agent-output.js";
import { type ArtifactEntry, openArtifact } from "./read-artifact.js";

export interface ArtifactByteRangeOptions extends ByteRangeOptions {
  /**
   * Read an artifact still being written (`complete: false` in the result) instead of failing
   * with UNAVAILABLE (reason `ARTIFACT_INCOMPLETE`). Default false.
   */
  allowIncomplete?: boolean;
}

/** Raw bytes of a tool or agent output, from a byte position. */
export interface ByteRangeRead {
  id: string;
  /** The bytes as written: not decoded, not sanitized (a range may cut a UTF-8 character). */
  bytes: Uint8Array;
  /** The position of `bytes[0]` in the file. */
  start: number;
  /** The file's size when it was opened; `start + bytes.byteLength` never passes it. */
  size: number;
  /** False only for an artifact still being written, read with `allowIncomplete`. */
  complete: boolean;
}

async function readOpened(
  file: OpenedRegularFile,
  id: string,
  what: string,
  range: ByteRange,
  complete: boolean,
  signal: AbortSignal | undefined,
): Promise<ByteRangeRead> {
  try {
    const bytes = await readByteRange(file.handle, file.size, range, what, signal);
    return { id, bytes, start: range.start, size: file.size, complete };
  } finally {
    await file.handle.close().catch(() => {});
  }
}

/** Bytes of `artifact://<id>` from `start` (found and opened as `readArtifact` does). */
export async function readArtifactBytes(
  location: DirectoryLocation,
  idValue: unknown,
  options: ArtifactByteRangeOptions,
  listing: DirectoryListingCache<ArtifactEntry[]>,
): Promise<ByteRangeRead> {
  const id = assertArtifactId(idValue);
  const range = checkByteRangeOptions(options);
  const { entry, file } = await openArtifact(location, id, options, listing);
  return readOpened(file, id, `artifact ${id}`, range, entry.complete, options.signal);
}

/** Bytes of `agent://<id>` from `start` (opened as `readAgentOutput` does). */
export async function readAgentOutputBytes(
  location: DirectoryLocation,
  idValue: unknown,
  options: ByteRangeOptions,
): Promise<ByteRangeRead> {
  const id = assertAgentOutputId(idValue);
  const range = checkByteRangeOptions(options);
  const file = await openAgentOutput(location, id);
  return readOpened(file, id, `agent output ${id}`, range, true, options.signal);
}
