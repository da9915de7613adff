import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { errnoOf, fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import { type ClaudeSessionLocationOptions, claudeSessionLocation } from "../claude/session-location.js";
import { assertSessionCodec, DEFAULT_SESSION_CODEC, type SessionCodec } from "../codec/codecs.js";
import { compressChunks } from "../codec/compress.js";
import { collectSessionFiles, type SkippedFile } from "./collect-files.js";
import {
  ARCHIVE_FORMAT_VERSION,
  DEFAULT_MAX_SESSION_BYTES,
  encodeArchiveHeader,
  type SessionArchiveEntry,
  type SessionArchiveManifest,
} from "./manifest.js";
import { assertPositiveInteger, type SessionArchive } from "./session-archive.js";

export interface CaptureSessionOptions extends ClaudeSessionLocationOptions {
  /** Default {@link DEFAULT_SESSION_CODEC} (`brotli`). */
  codec?: SessionCodec;
  /** Fail with TOO_LARGE when the session's files add up to more. Default 256 MiB. */
  maxBytes?: number;
  /** Include `agent-*.jsonl` files beside the transcript that belong to this session. Default true. */
  includeLegacyAgents?: boolean;
  signal?: AbortSignal;
}

export interface CapturedSession extends SessionArchive {
  projectKey: string;
  manifest: SessionArchiveManifest;
  blobSizeBytes: number;
  /** Files seen but left out (symlinks, unsafe names), with the reason. */
  skipped: SkippedFile[];
}

const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * Captures a Claude Code session into one compressed archive: the main `<sessionId>.jsonl`, its
 * companion directory (`subagents/`, `tool-results/`) and legacy `agent-*.jsonl` files, each with
 * its size and sha256 in the manifest. The files are read once into memory (bounded by
 * `maxBytes`), so the archive is a consistent snapshot of what was read.
 */
export async function captureSession(options: CaptureSessionOptions): Promise<CapturedSession> {
  const codec = options.codec ?? DEFAULT_SESSION_CODEC;
  assertSessionCodec(codec);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SESSION_BYTES;
  assertPositiveInteger(maxBytes, "maxBytes");
  const { signal } = options;
  const location = await claudeSessionLocation(options);
  const context = `capture session ${location.sessionId}`;
  try {
    throwIfAborted(signal, context);
    const { files, skipped } = await collectSessionFiles(location, {
      includeLegacyAgents: options.includeLegacyAgents ?? true,
      ...(signal ? { signal } : {}),
    });
    const tooLarge = (bytes: number) =>
      new StowageError(
        "TOO_LARGE",
        `session files add up to ${bytes} bytes, over the limit of ${maxBytes} bytes (maxBytes)`,
        {
          details: { limit: maxBytes, size: bytes },
        },
      );
    const entries: SessionArchiveEntry[] = [];
    const contents: Uint8Array[] = [];
    let total = 0;
    for (const [index, file] of files.entries()) {
      let bytes: Uint8Array;
      let mtimeMs: number;
      try {
        // The size is checked before reading, so one huge file fails without being loaded.
        const info = await stat(file.absolute);
        if (total + info.size > maxBytes) throw tooLarge(total + info.size);
        mtimeMs = Math.round(info.mtimeMs);
        bytes = await readFile(file.absolute, signal ? { signal } : {});
      } catch (err) {
        // A companion file removed between listing and reading is simply not part of the snapshot.
        if (errnoOf(err) === "ENOENT" && index > 0) {
          skipped.push({ path: file.path, reason: "removed while capturing" });
          continue;
        }
        throw err;
      }
      total += bytes.byteLength;
      if (total > maxBytes) throw tooLarge(total);
      entries.push({ path: file.path, size: bytes.byteLength, sha256: sha256Hex(bytes), mtimeMs });
      contents.push(bytes);
    }
    const manifest: SessionArchiveManifest = {
      format: "stowage-session",
      version: ARCHIVE_FORMAT_VERSION,
      agent: "claude-code",
      sessionId: location.sessionId,
      projectKey: location.projectKey,
      capturedAt: new Date().toISOString(),
      files: entries,
    };
    const header = encodeArchiveHeader(manifest);
    const rawSizeBytes = header.byteLength + total;
    if (rawSizeBytes > maxBytes) throw tooLarge(rawSizeBytes);
    const blob = await compressChunks(codec, [header, ...contents], {
      sizeHint: rawSizeBytes,
      ...(signal ? { signal } : {}),
    });
    return {
      sessionId: location.sessionId,
      projectKey: location.projectKey,
      codec,
      blob,
      blobSizeBytes: blob.byteLength,
      rawSizeBytes,
      manifest,
      skipped,
    };
  } catch (err) {
    throw fromSystemError(err, context);
  }
}
