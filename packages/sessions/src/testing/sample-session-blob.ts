import { gzipSync } from "node:zlib";
import { sha256Hex } from "@stowage/core";
import type { SessionAgent } from "../agents/session-agent.js";
import {
  ARCHIVE_FORMAT_VERSION,
  encodeArchiveHeader,
  type SessionArchiveManifest,
} from "../archive/manifest.js";
import type { SessionArchive } from "../archive/session-archive.js";

const encoder = new TextEncoder();

/**
 * A small, valid session blob of `agent` for repository tests, made synchronously (gzip):
 * Claude Code's in the compatibility format (one gzipped JSONL transcript), Codex's and
 * OpenCode's as one-file Stowage archives (a rollout; an `opencode export`). `note` goes into
 * the content, so that two blobs of one session differ.
 */
export function sampleSessionBlob(options: {
  sessionId: string;
  agent?: SessionAgent;
  note?: string;
}): SessionArchive & { agentType: SessionAgent } {
  const { sessionId, note = "" } = options;
  const agent = options.agent ?? "claude-code";
  let raw: Uint8Array;
  if (agent === "claude-code") {
    raw = encoder.encode(
      `${JSON.stringify({ type: "user", sessionId, message: { role: "user", content: `hello ${note}` } })}\n`,
    );
  } else {
    const [path, content] =
      agent === "codex"
        ? [
            `2026/11/23/rollout-2026-11-23T04-00-00-${sessionId}.jsonl`,
            `${JSON.stringify({ timestamp: "2026-11-23T04:00:00.000Z", type: "session_meta", payload: { id: sessionId, note } })}\n`,
          ]
        : [`${sessionId}.json`, JSON.stringify({ info: { id: sessionId, title: note }, messages: [] })];
    const bytes = encoder.encode(content);
    const manifest: SessionArchiveManifest = {
      format: "stowage-session",
      version: ARCHIVE_FORMAT_VERSION,
      agent,
      sessionId,
      capturedAt: "2026-11-23T04:00:00.000Z",
      files: [{ path, size: bytes.byteLength, sha256: sha256Hex(bytes), mtimeMs: 1_795_406_400_000 }],
    };
    const header = encodeArchiveHeader(manifest);
    raw = new Uint8Array(header.byteLength + bytes.byteLength);
    raw.set(header, 0);
    raw.set(bytes, header.byteLength);
  }
  const blob = gzipSync(raw);
  return {
    sessionId,
    agentType: agent,
    codec: "gzip",
    blob: new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength),
    rawSizeBytes: raw.byteLength,
  };
}
