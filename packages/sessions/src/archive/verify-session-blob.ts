import type { SessionAgent } from "../agents/session-agent.js";
import type { SessionArchiveManifest } from "./manifest.js";
import { readSessionFiles } from "./read-session-files.js";
import type { SessionArchive } from "./session-archive.js";
import type { SessionBlobFormat } from "./session-archive-reader.js";

export interface VerifySessionBlobOptions {
  /** The agent the blob must hold a session of. Default: whatever its manifest says. */
  agent?: SessionAgent;
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
  const { format, manifest, rawSizeBytes } = await readSessionFiles(archive, {
    ...options,
    keep: () => false,
  });
  return { format, manifest, rawSizeBytes };
}
