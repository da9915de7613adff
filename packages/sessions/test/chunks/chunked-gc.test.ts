// Chunks are shared between captures and released only through garbage collection's roots: the
// stored session blobs, read decompressed and scanned for refs as a deployment reads them
// (`@stowage/tenancy`'s session-blob row). Deleting a capture frees what no other live capture
// references, and nothing another capture needs.
import { mkdir, realpath } from "node:fs/promises";
import { join } from "node:path";
import { collectGarbage, createBlobStore, scanBytesForBlobRefs } from "@stowage/blob-store";
import { createMemoryObjectStore } from "@stowage/core";
import { realTranscripts, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { chunkSessionBlob } from "../../src/chunks/chunk-session-blob.js";
import { decompressBounded } from "../../src/codec/compress.js";
import { iterateSessionBlobs } from "../../src/repository/iterate-session-blobs.js";
import { createMemorySessionBlobRepository } from "../../src/repository/memory-session-blobs.js";
import type { SessionBlobRepository } from "../../src/repository/session-blob-repository.js";
import { writeSessionTree } from "../../src/testing/write-session-tree.js";
import { transcriptWithScreenshots } from "./screenshot-transcript.js";

const base = await tempDirectory("stowage-chunked-gc-");
const sessionId = "624a4a58-b34c-462d-a70d-13421c8125a8";
const owner = "user-alice";
// Skipped where the real transcript is absent (a clone without shared/ beside it); realTranscripts
// prints why, and fails in CI.
const real = realTranscripts("chunks under garbage collection (a real Claude Code transcript)");

async function* storedRefs(repository: SessionBlobRepository): AsyncGenerator<string> {
  for await (const record of iterateSessionBlobs(repository)) {
    yield* scanBytesForBlobRefs(
      decompressBounded(record.blob, record.codec, { maxBytes: record.rawSizeBytes }),
    );
  }
}

describe.skipIf(!real.present)("chunks of stored captures under garbage collection", () => {
  it("keeps every chunk a live capture needs, and frees a deleted capture's own chunks", async () => {
    await mkdir(join(base, "work"), { recursive: true });
    const cwd = await realpath(join(base, "work"));
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    const repository = createMemorySessionBlobRepository();
    const configDir = join(base, "source");
    const store = async (requestId: string, lines: number) => {
      const transcript = transcriptWithScreenshots({ lines, every: 15, distinct: 4 + (lines > 200 ? 1 : 0) });
      await writeSessionTree({
        configDir,
        cwd,
        sessionId,
        files: new Map([[`${sessionId}.jsonl`, transcript]]),
      });
      const chunked = await chunkSessionBlob(await captureSession({ configDir, cwd, sessionId }), { blobs });
      await repository.create({ ...chunked, owner, requestId, agentType: "claude-code" });
    };
    await store("req-1", 150);
    await store("req-2", 222);
    const collect = () =>
      collectGarbage({
        blobs,
        roots: [{ name: "sessionBlobs", refs: () => storedRefs(repository) }],
        graceMs: 0,
        timestampSlackMs: 0,
      });

    expect((await collect()).deleted).toBe(0);

    await repository.deleteForRequest(owner, "req-2");
    const afterOne = await collect();
    // The follow-up's own chunks (its new lines, its fifth screenshot) go; what the first shares stays.
    expect(afterOne.deleted).toBeGreaterThan(0);
    const first = await repository.getLatestForRequest(owner, "req-1");
    const restored = await restoreSession(first!, { configDir: join(base, "target"), cwd, blobs });
    expect(restored.files).toHaveLength(1);

    await repository.deleteForRequest(owner, "req-1");
    await collect();
    const left: string[] = [];
    for await (const info of blobs.iterate()) left.push(info.ref);
    expect(left).toEqual([]);
  });
});
