import { sha256Hex } from "@stowage/core";
import { ARCHIVE_FORMAT_VERSION, ARCHIVE_MAGIC } from "../src/archive/manifest.js";
import {
  compressChunks,
  type SessionArchive,
  type SessionArchiveManifest,
  type SessionCodec,
} from "../src/index.js";

const encoder = new TextEncoder();

export interface RawFile {
  path: string;
  content: Uint8Array;
  /** Override what the manifest says. */
  size?: number;
  sha256?: string;
}

/**
 * Builds an archive byte by byte, including invalid ones: the manifest says whatever the test
 * wants, so that restore's checks (not capture's) are what is exercised.
 */
export async function buildArchive(options: {
  sessionId: string;
  files: RawFile[];
  codec?: SessionCodec;
  manifest?: Record<string, unknown>;
  magic?: string;
  version?: number;
  trailing?: Uint8Array;
  projectKey?: string;
}): Promise<SessionArchive> {
  const manifest: SessionArchiveManifest | Record<string, unknown> = {
    format: "stowage-session",
    version: ARCHIVE_FORMAT_VERSION,
    agent: "claude-code",
    sessionId: options.sessionId,
    projectKey: options.projectKey ?? "-workspace-app",
    capturedAt: new Date().toISOString(),
    files: options.files.map((file) => ({
      path: file.path,
      size: file.size ?? file.content.byteLength,
      sha256: file.sha256 ?? sha256Hex(file.content),
      mtimeMs: 1_700_000_000_000,
    })),
    ...options.manifest,
  };
  const json = encoder.encode(JSON.stringify(manifest));
  const preamble = new Uint8Array(13);
  preamble.set(encoder.encode(options.magic ?? ARCHIVE_MAGIC).subarray(0, 8), 0);
  preamble[8] = options.version ?? ARCHIVE_FORMAT_VERSION;
  new DataView(preamble.buffer).setUint32(9, json.byteLength);
  const parts = [
    preamble,
    json,
    ...options.files.map((file) => file.content),
    ...(options.trailing ? [options.trailing] : []),
  ];
  const rawSizeBytes = parts.reduce((sum, part) => sum + part.byteLength, 0);
  const codec = options.codec ?? "gzip";
  return { sessionId: options.sessionId, codec, blob: await compressChunks(codec, parts), rawSizeBytes };
}
