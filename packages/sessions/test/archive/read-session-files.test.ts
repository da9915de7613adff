import { gzipSync } from "node:zlib";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { readSessionFiles } from "../../src/archive/read-session-files.js";
import { buildArchive } from "../build-archive.js";

const sessionId = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
const bytes = (text: string) => new TextEncoder().encode(text);
const transcript = `${JSON.stringify({ type: "user", sessionId, message: { role: "user", content: "hi" } })}\n`;
const subagent = `${JSON.stringify({ type: "user", sessionId, isSidechain: true, message: { role: "user", content: "look" } })}\n`;
const files = [
  { path: `${sessionId}.jsonl`, content: bytes(transcript) },
  { path: `${sessionId}/subagents/agent-a1.jsonl`, content: bytes(subagent) },
  { path: `${sessionId}/tool-results/toolu_1.txt`, content: bytes("PASS ".repeat(1000)) },
];

describe("readSessionFiles", () => {
  it("gives every file's bytes as the agent wrote them, by manifest path", async () => {
    const archive = await buildArchive({ sessionId, files, codec: "brotli" });
    const read = await readSessionFiles(archive);
    expect(read.format).toBe("archive");
    expect(read.manifest.files.map((file) => file.path)).toEqual(files.map((file) => file.path));
    expect([...read.files.keys()]).toEqual(files.map((file) => file.path));
    for (const file of files)
      expect(Buffer.from(read.files.get(file.path)!)).toEqual(Buffer.from(file.content));
  });

  it("keeps only the files asked for, but checks every one", async () => {
    const keep = (entry: { path: string }) => entry.path.endsWith(".jsonl");
    const read = await readSessionFiles(await buildArchive({ sessionId, files }), { keep });
    expect([...read.files.keys()]).toEqual([`${sessionId}.jsonl`, `${sessionId}/subagents/agent-a1.jsonl`]);
    // A file left out whose bytes do not match the manifest still fails the read.
    const tampered = await buildArchive({
      sessionId,
      files: [files[0]!, { ...files[2]!, sha256: "0".repeat(64) }],
    });
    await expectStowageError(readSessionFiles(tampered, { keep }), "INTEGRITY", "SHA256_MISMATCH");
  });

  it("reads the compatibility format (one gzipped JSONL transcript) as <sessionId>.jsonl", async () => {
    const blob = gzipSync(transcript);
    const read = await readSessionFiles({
      sessionId,
      codec: "gzip",
      blob: new Uint8Array(blob),
      rawSizeBytes: Buffer.byteLength(transcript),
    });
    expect(read.format).toBe("jsonl");
    expect(new TextDecoder().decode(read.files.get(`${sessionId}.jsonl`))).toBe(transcript);
  });

  it("refuses a blob over maxBytes before reading its files", async () => {
    const archive = await buildArchive({ sessionId, files });
    await expectStowageError(
      readSessionFiles(archive, { maxBytes: 100 }),
      "TOO_LARGE",
      "DECOMPRESSED_TOO_LARGE",
    );
  });
});
