import { type ContentStore, fromSystemError } from "@stowage/core";
import type { SessionAgent } from "../agents/session-agent.js";
import { opencodeExportSessionId } from "../opencode/export-file.js";
import { readOpencodeExport } from "../opencode/export-json.js";
import {
  DEFAULT_MAX_SESSION_BYTES,
  type SessionArchiveEntry,
  type SessionArchiveManifest,
} from "./manifest.js";
import { assertPositiveInteger, assertSessionArchive, type SessionArchive } from "./session-archive.js";
import {
  finishSessionArchive,
  type OpenedSessionArchive,
  openSessionArchive,
  readSessionEntry,
  type SessionBlobFormat,
} from "./session-archive-reader.js";

export interface ReadSessionFilesOptions {
  /** The agent the blob must hold a session of. Default: whatever its manifest says. */
  agent?: SessionAgent;
  /** Cap on the decompressed size. Default 256 MiB. */
  maxBytes?: number;
  /** Where a chunked archive's chunks are (INVALID_INPUT, `CHUNKED_BLOB`, for one read without it). */
  blobs?: ContentStore;
  /** Which files' bytes to keep (every file is read and checked all the same). Default: every file. */
  keep?: (entry: SessionArchiveEntry) => boolean;
  signal?: AbortSignal;
}

export interface SessionFiles {
  format: SessionBlobFormat;
  manifest: SessionArchiveManifest;
  /**
   * The decompressed size, as measured: the recorded one for an archive (they must match); for a
   * transcript in the compatibility format, what it decompressed to.
   */
  rawSizeBytes: number;
  /** The bytes of each file kept, by its manifest path, exactly as the agent wrote them. */
  files: Map<string, Uint8Array>;
}

/**
 * Reads a stored session blob's files into memory, writing nothing, with every check a restore
 * makes: the codec decodes within `maxBytes`, the manifest (or the compatibility format's one
 * JSONL transcript) is well-formed, every sha256 and the raw size match, a legacy agent file
 * belongs to the session, an OpenCode export is one. What a viewer or an export reads a stored
 * session with; `verifySessionBlob` is this without keeping anything. Throws INVALID_INPUT,
 * TOO_LARGE, INTEGRITY, UNAVAILABLE (a codec this Node.js lacks).
 */
export async function readSessionFiles(
  archive: SessionArchive,
  options: ReadSessionFilesOptions = {},
): Promise<SessionFiles> {
  assertSessionArchive(archive, Number.MAX_SAFE_INTEGER);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SESSION_BYTES;
  assertPositiveInteger(maxBytes, "maxBytes");
  const { signal, keep } = options;
  let opened: OpenedSessionArchive | undefined;
  try {
    opened = await openSessionArchive(archive, {
      maxBytes,
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(options.blobs ? { blobs: options.blobs } : {}),
      ...(signal ? { signal } : {}),
    });
    const { manifest } = opened;
    const files = new Map<string, Uint8Array>();
    for (const entry of manifest.files) {
      const isExport = manifest.agent === "opencode";
      const kept = keep === undefined || keep(entry);
      // The compatibility format's one entry is sized as it decompresses: keep all of it.
      const keepBytes = kept ? Number.MAX_SAFE_INTEGER : isExport ? entry.size : 0;
      const bytes = await readSessionEntry(opened, entry, () => {}, {
        keepBytes,
        ...(signal ? { signal } : {}),
      });
      // The session's own export, or a child session's, each of its own session.
      if (isExport) readOpencodeExport(bytes, opencodeExportSessionId(entry.path));
      if (kept) files.set(entry.path, bytes);
    }
    await finishSessionArchive(opened);
    const rawSizeBytes = opened.format === "jsonl" ? manifest.files[0]!.size : opened.archive.rawSizeBytes;
    return { format: opened.chunked ? "chunked" : opened.format, manifest, rawSizeBytes, files };
  } catch (err) {
    throw fromSystemError(err, `read session blob ${archive.sessionId}`);
  } finally {
    await opened?.reader.close().catch(() => {});
  }
}
