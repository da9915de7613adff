import { describeValue, StowageError } from "@stowage/core";
import {
  assertSessionArchive,
  DEFAULT_MAX_SESSION_BLOB_BYTES,
  type SessionArchive,
} from "../archive/session-archive.js";
import type { SessionCodec } from "../codec/codecs.js";

/**
 * A session in a container's JSON response (or a follow-up request): the blob base64-encoded, as
 * existing container protocols carry it (`{ sessionId, sessionBlob }`), plus the codec tag and
 * the decompressed size so the receiver never has to guess either.
 */
export interface SessionTransport {
  sessionId: string;
  /** The compressed archive, standard base64 with padding. */
  sessionBlob: string;
  sessionCodec: SessionCodec;
  sessionRawSizeBytes: number;
}

export interface FromTransportOptions {
  /** Largest decoded blob accepted. Default {@link DEFAULT_MAX_SESSION_BLOB_BYTES} (64 MiB). */
  maxBlobBytes?: number;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The JSON-safe form of a captured session for a container response. */
export function toTransport(archive: SessionArchive): SessionTransport {
  assertSessionArchive(archive, Number.MAX_SAFE_INTEGER);
  return {
    sessionId: archive.sessionId,
    sessionBlob: Buffer.from(archive.blob.buffer, archive.blob.byteOffset, archive.blob.byteLength).toString(
      "base64",
    ),
    sessionCodec: archive.codec,
    sessionRawSizeBytes: archive.rawSizeBytes,
  };
}

/**
 * Parses a transported session (an object, e.g. from `JSON.parse`). Checks every field: a UUID
 * session id, a known codec tag (never guessed), strict base64 within `maxBlobBytes`, and a
 * positive raw size. Throws INVALID_INPUT or TOO_LARGE.
 */
export function fromTransport(value: unknown, options: FromTransportOptions = {}): SessionArchive {
  const maxBlobBytes = options.maxBlobBytes ?? DEFAULT_MAX_SESSION_BLOB_BYTES;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `session transport must be an object, got ${describeValue(value)}`,
    );
  }
  const { sessionId, sessionBlob, sessionCodec, sessionRawSizeBytes } = value as Record<string, unknown>;
  if (sessionCodec === undefined) {
    throw new StowageError(
      "INVALID_INPUT",
      'session transport has no sessionCodec; it must say how sessionBlob is compressed ("gzip", "brotli" or "zstd")',
      { reason: "MISSING_CODEC" },
    );
  }
  if (typeof sessionBlob !== "string" || sessionBlob.length === 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `sessionBlob must be a non-empty base64 string, got ${describeValue(sessionBlob)}`,
    );
  }
  // Checked before decoding, so an oversized string is refused without allocating its bytes.
  const decodedLength = Math.floor((sessionBlob.length * 3) / 4);
  if (decodedLength - 2 > maxBlobBytes) {
    throw new StowageError(
      "TOO_LARGE",
      `sessionBlob decodes to more than the limit of ${maxBlobBytes} bytes`,
      {
        details: { limit: maxBlobBytes },
      },
    );
  }
  if (sessionBlob.length % 4 !== 0 || !BASE64.test(sessionBlob)) {
    throw new StowageError(
      "INVALID_INPUT",
      "sessionBlob must be standard base64 with padding (A-Z a-z 0-9 + / =)",
      {
        reason: "BAD_BASE64",
      },
    );
  }
  const decoded = Buffer.from(sessionBlob, "base64");
  const archive = {
    sessionId,
    codec: sessionCodec,
    blob: new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength),
    rawSizeBytes: sessionRawSizeBytes,
  };
  assertSessionArchive(archive, maxBlobBytes);
  return archive;
}
