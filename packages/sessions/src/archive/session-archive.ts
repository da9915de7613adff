import { describeValue, StowageError } from "@stowage/core";
import { assertSessionId } from "../agents/session-id.js";
import { assertSessionCodec, type SessionCodec } from "../codec/codecs.js";

/** Largest compressed session blob accepted by transport and repositories by default: 64 MiB. */
export const DEFAULT_MAX_SESSION_BLOB_BYTES = 64 * 1024 * 1024;

/** A captured session as it travels and is stored: the compressed archive and its codec tag. */
export interface SessionArchive {
  sessionId: string;
  /** How `blob` is compressed; recorded with it so that reading never guesses. */
  codec: SessionCodec;
  blob: Uint8Array;
  /** Size of the archive once decompressed (preamble, manifest and files). */
  rawSizeBytes: number;
}

/** Validates the fields of a {@link SessionArchive}; INVALID_INPUT or TOO_LARGE. */
export function assertSessionArchive(
  value: unknown,
  maxBlobBytes = DEFAULT_MAX_SESSION_BLOB_BYTES,
): asserts value is SessionArchive {
  if (typeof value !== "object" || value === null) {
    throw new StowageError("INVALID_INPUT", `session archive must be an object, got ${describeValue(value)}`);
  }
  const { sessionId, codec, blob, rawSizeBytes } = value as Record<string, unknown>;
  assertSessionId(sessionId);
  assertSessionCodec(codec);
  if (!(blob instanceof Uint8Array) || blob.byteLength === 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `session blob must be a non-empty Uint8Array, got ${describeValue(blob)}`,
    );
  }
  if (blob.byteLength > maxBlobBytes) {
    throw new StowageError(
      "TOO_LARGE",
      `session blob is ${blob.byteLength} bytes, over the limit of ${maxBlobBytes} bytes`,
      { details: { limit: maxBlobBytes, size: blob.byteLength } },
    );
  }
  if (typeof rawSizeBytes !== "number" || !Number.isSafeInteger(rawSizeBytes) || rawSizeBytes <= 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `rawSizeBytes must be a positive integer, got ${describeValue(rawSizeBytes)}`,
    );
  }
}

/** Throws INVALID_INPUT unless `value` is a positive safe integer (a limit or duration option). */
export function assertPositiveInteger(value: unknown, what: string): asserts value is number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a positive integer, got ${describeValue(value)}`,
    );
  }
}
