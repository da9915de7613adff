import { describeValue, StowageError } from "@stowage/core";
import { assertSessionAgent, DEFAULT_SESSION_AGENT, type SessionAgent } from "../agents/session-agent.js";
import {
  assertSessionArchive,
  DEFAULT_MAX_SESSION_BLOB_BYTES,
  type SessionArchive,
} from "../archive/session-archive.js";
import { assertSessionCodec, type SessionCodec } from "../codec/codecs.js";
import { gzipTrailerSize } from "../codec/gzip-trailer.js";

/**
 * A session in a container's JSON response (or a follow-up request): the blob base64-encoded, as
 * existing container protocols carry it (`{ sessionId, sessionBlob }`), plus the codec tag, the
 * decompressed size and the agent, so the receiver never has to guess any of them.
 *
 * The session-persistence design's own form, `{ sessionId, sessionBlob }` alone, is the
 * compatibility format: `sessionBlob` is the gzip of one Claude Code JSONL transcript. Without
 * `sessionCodec` the codec is `gzip`; without `sessionRawSizeBytes` the size is the one gzip
 * records in its trailer (its last member's: a blob of several gzip members is measured when it
 * is read, and stored with the measured size); without `agentType` the agent is Claude Code.
 * Absent means absent: `null` in any of these fields is refused.
 */
export interface SessionTransport {
  sessionId: string;
  /** The compressed archive (or gzipped JSONL transcript), standard base64 with padding. */
  sessionBlob: string;
  sessionCodec: SessionCodec;
  sessionRawSizeBytes: number;
  /** The agent whose session it is. */
  agentType: SessionAgent;
}

/** What {@link fromTransport} returns: the archive and the agent the transport named. */
export type TransportedSession = SessionArchive & { agentType: SessionAgent };

export interface FromTransportOptions {
  /** Largest decoded blob accepted. Default 64 MiB. */
  maxBlobBytes?: number;
}

const NOT_IN_BASE64_ALPHABET = /[^A-Za-z0-9+/]/;

/**
 * Standard base64 with padding: a length in fours, `=` only as the last one or two characters.
 * Checked by a search for one character outside the alphabet, not by a pattern of the whole
 * string: a pattern repeating a four-character group backtracks once per group and overflows the
 * stack past a few megabytes.
 */
function isPaddedBase64(text: string): boolean {
  if (text.length % 4 !== 0) return false;
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return !NOT_IN_BASE64_ALPHABET.test(padding === 0 ? text : text.slice(0, -padding));
}

/**
 * The JSON-safe form of a captured session for a container response. The agent is the
 * archive's `agent` (a captured session) or `agentType` (a stored record), else Claude Code.
 */
export function toTransport(
  archive: SessionArchive & { agent?: string; agentType?: string },
): SessionTransport {
  assertSessionArchive(archive, Number.MAX_SAFE_INTEGER);
  const agentType = archive.agent ?? archive.agentType ?? DEFAULT_SESSION_AGENT;
  assertSessionAgent(agentType, "agentType");
  return {
    agentType,
    sessionId: archive.sessionId,
    sessionBlob: Buffer.from(archive.blob.buffer, archive.blob.byteOffset, archive.blob.byteLength).toString(
      "base64",
    ),
    sessionCodec: archive.codec,
    sessionRawSizeBytes: archive.rawSizeBytes,
  };
}

/**
 * Parses a transported session (an object, e.g. from `JSON.parse`). Checks every field: a safe
 * session id, a known codec tag (absent: the compatibility format, `gzip`), strict base64 within
 * `maxBlobBytes`, a positive raw size (absent with gzip: the size in gzip's trailer) and a known
 * agent (absent: `claude-code`). Throws INVALID_INPUT or TOO_LARGE. It checks the form only: a
 * repository's `create` (or {@link verifySessionBlob}) reads the blob itself.
 */
export function fromTransport(value: unknown, options: FromTransportOptions = {}): TransportedSession {
  const maxBlobBytes = options.maxBlobBytes ?? DEFAULT_MAX_SESSION_BLOB_BYTES;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `session transport must be an object, got ${describeValue(value)}`,
    );
  }
  const {
    sessionId,
    sessionBlob,
    sessionRawSizeBytes,
    agentType = DEFAULT_SESSION_AGENT,
  } = value as Record<string, unknown>;
  // The design document's form names no codec: it is gzip. Only an absent field means that; a
  // null is a value, and refused like any other that is not a codec tag.
  const { sessionCodec = "gzip" } = value as Record<string, unknown>;
  assertSessionAgent(agentType, "agentType");
  assertSessionCodec(sessionCodec, "sessionCodec");
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
  if (!isPaddedBase64(sessionBlob)) {
    throw new StowageError(
      "INVALID_INPUT",
      "sessionBlob must be standard base64 with padding (A-Z a-z 0-9 + / =)",
      {
        reason: "BAD_BASE64",
      },
    );
  }
  const decoded = Buffer.from(sessionBlob, "base64");
  const blob = new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
  const archive = {
    sessionId,
    codec: sessionCodec,
    blob,
    rawSizeBytes:
      sessionRawSizeBytes === undefined && sessionCodec === "gzip"
        ? gzipTrailerSize(blob)
        : sessionRawSizeBytes,
    agentType,
  };
  assertSessionArchive(archive, maxBlobBytes);
  return archive;
}
