import { type ContentStore, fromSystemError, StowageError } from "@stowage/core";
import type { SessionAgent } from "../agents/session-agent.js";
import { archiveManifestOf, type ChunkedSessionManifest } from "../chunks/chunked-manifest.js";
import { DEFAULT_MAX_SESSION_BYTES, type SessionArchiveManifest } from "./manifest.js";
import { readSessionFiles } from "./read-session-files.js";
import { assertPositiveInteger, assertSessionArchive, type SessionArchive } from "./session-archive.js";
import { readChunkedManifest, type SessionBlobFormat } from "./session-archive-reader.js";

export interface VerifySessionBlobOptions {
  /** The agent the blob must hold a session of. Default: whatever its manifest says. */
  agent?: SessionAgent;
  /**
   * Where a chunked archive's chunks are: given, they are read through too; without it a chunked
   * archive's manifest alone is checked (its chunks were checked when they were made).
   */
  blobs?: ContentStore;
  /** Cap on the decompressed size. Default 256 MiB. */
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface VerifiedSessionBlob {
  format: SessionBlobFormat;
  manifest: SessionArchiveManifest;
  /**
   * The decompressed size, as measured: the recorded one for an archive (they must match); for a
   * transcript in the compatibility format, what it decompressed to (a sender of several gzip
   * members cannot record it, see `fromTransport`).
   */
  rawSizeBytes: number;
}

/** A chunked archive checked by its manifest alone: of the agent asked for. */
function verifiedManifest(
  chunked: ChunkedSessionManifest,
  agent: SessionAgent | undefined,
): VerifiedSessionBlob {
  if (agent !== undefined && chunked.agent !== agent) {
    throw new StowageError(
      "INVALID_INPUT",
      `session archive holds a ${chunked.agent} session, not a ${agent} one`,
      {
        reason: "AGENT_MISMATCH",
        details: { agent: chunked.agent },
      },
    );
  }
  return {
    format: "chunked",
    manifest: archiveManifestOf(chunked),
    rawSizeBytes: chunked.assembled.rawSizeBytes,
  };
}

/**
 * Reads a whole session blob the way `restoreSession` will, writing nothing: the codec decodes
 * within `maxBytes`, the format is known, the manifest is well-formed (safe paths of the right
 * agent and session) or the JSONL transcript is, every sha256 and the raw size match, a legacy
 * agent file belongs to the session, an OpenCode export is one. Repositories call it (through
 * `normalizeCreateInput`) so that a blob that could not be restored is refused when it is stored,
 * not discovered at the follow-up run. Throws what restore would: INVALID_INPUT, TOO_LARGE,
 * INTEGRITY, UNAVAILABLE (a codec this Node.js lacks).
 */
export async function verifySessionBlob(
  archive: SessionArchive,
  options: VerifySessionBlobOptions = {},
): Promise<VerifiedSessionBlob> {
  if (!options.blobs) {
    assertSessionArchive(archive, Number.MAX_SAFE_INTEGER);
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_SESSION_BYTES;
    assertPositiveInteger(maxBytes, "maxBytes");
    const chunked = await readChunkedManifest(archive, {
      maxBytes,
      ...(options.signal ? { signal: options.signal } : {}),
    }).catch((err: unknown) => {
      throw fromSystemError(err, `verify session blob ${archive.sessionId}`);
    });
    if (chunked) return verifiedManifest(chunked, options.agent);
  }
  const { format, manifest, rawSizeBytes } = await readSessionFiles(archive, {
    ...options,
    keep: () => false,
  });
  return { format, manifest, rawSizeBytes };
}
