import { fromSystemError } from "@stowage/core";
import type { SessionAgent } from "../agents/session-agent.js";
import { readOpencodeExport } from "../opencode/export-json.js";
import { DEFAULT_MAX_SESSION_BYTES, type SessionArchiveManifest } from "./manifest.js";
import { assertPositiveInteger, assertSessionArchive, type SessionArchive } from "./session-archive.js";
import {
  finishSessionArchive,
  type OpenedSessionArchive,
  openSessionArchive,
  readSessionEntry,
  type SessionBlobFormat,
} from "./session-archive-reader.js";

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
  assertSessionArchive(archive, Number.MAX_SAFE_INTEGER);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SESSION_BYTES;
  assertPositiveInteger(maxBytes, "maxBytes");
  const { signal } = options;
  let opened: OpenedSessionArchive | undefined;
  try {
    opened = await openSessionArchive(archive, {
      maxBytes,
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(signal ? { signal } : {}),
    });
    const { manifest } = opened;
    for (const entry of manifest.files) {
      const isExport = manifest.agent === "opencode";
      const bytes = await readSessionEntry(opened, entry, () => {}, {
        ...(isExport ? { keepBytes: entry.size } : {}),
        ...(signal ? { signal } : {}),
      });
      if (isExport) readOpencodeExport(bytes, manifest.sessionId);
    }
    await finishSessionArchive(opened);
    const rawSizeBytes = opened.format === "jsonl" ? manifest.files[0]!.size : archive.rawSizeBytes;
    return { format: opened.format, manifest, rawSizeBytes };
  } catch (err) {
    throw fromSystemError(err, `verify session blob ${archive.sessionId}`);
  } finally {
    await opened?.reader.close().catch(() => {});
  }
}
