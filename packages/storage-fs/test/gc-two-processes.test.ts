import { join } from "node:path";
import { collectGarbage, createBlobStore, scanFilesForBlobRefs } from "@stowage/blob-store";
import { createFsObjectStore } from "@stowage/storage-fs";
import { spawnChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";

const base = await tempDirectory("stowage-fs-gc-race-");
const sessionWriter = new URL("./children/session-writer.ts", import.meta.url);

describe("garbage collection racing a session writer in another process", () => {
  it("never deletes an image a session file references once its put returned", async () => {
    const root = join(base, "blobs");
    const sessionFile = join(base, "session.jsonl");
    const blobs = createBlobStore({ store: createFsObjectStore({ root, fsync: false }), layout: "sharded" });
    // Covers the writer's time between its put and its session line (under a millisecond, unless
    // the machine stalls; the writer reports lines later than this apart).
    const graceMs = 50;
    // At least 4 s and 150 writes, at most 45 s: enough rounds of the race on a loaded machine too.
    const child = spawnChild(sessionWriter, [root, sessionFile, "4000", String(graceMs), "150", "45000"]);
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    let running = true;
    void exited.then(() => {
      running = false;
    });

    let runs = 0;
    let deleted = 0;
    let restored = 0;
    while (running) {
      const report = await collectGarbage({
        blobs,
        roots: [{ name: "session", refs: () => scanFilesForBlobRefs(sessionFile, { allowMissing: true }) }],
        graceMs,
        timestampSlackMs: 0,
      });
      runs++;
      deleted += report.deleted;
      restored += report.restored;
    }
    expect(await exited).toBe(0);
    expect(stderr).toBe("");
    const { writes, missing, late } = JSON.parse(stdout) as { writes: number; missing: number; late: number };
    console.log(
      `${writes} session writes (${late} late) against ${runs} collections (${deleted} deleted, ${restored} put back)`,
    );
    expect(writes).toBeGreaterThan(100);
    expect(deleted).toBeGreaterThan(0);
    expect(missing).toBe(0);
    for await (const hash of scanFilesForBlobRefs(sessionFile)) expect(await blobs.get(hash)).not.toBeNull();
  });
});
