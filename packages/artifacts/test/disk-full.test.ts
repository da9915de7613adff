import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { createArtifactStore, createOutputSink } from "@stowage/artifacts";
import { expectStowageError } from "@stowage/core/testing";
import { isRoot, tempDirectory } from "@stowage/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { mountTmpfs, openFdCount, unmount } from "./helpers.js";

// A 1 MiB tmpfs is a disk that fills up (needs root; skipped with a printed reason outside CI).
const base = await tempDirectory("stowage-artifacts-disk-full-");
const mountPoint = join(base, "tmpfs");
const mounted = isRoot && (await mountTmpfs(mountPoint, "1m", "disk-full tests"));
if (!isRoot) console.warn("[stowage] disk-full tests skipped: mounting a tmpfs needs root");
afterAll(() => {
  if (mounted) unmount(mountPoint);
});
const quiet = { warn: () => {} };
let count = 0;

describe.skipIf(!mounted)("a full disk", () => {
  it("makes the sink fall back to its tail, record STORAGE_FULL, close the file and remove it", async () => {
    const before = await openFdCount();
    const store = createArtifactStore({ dir: join(mountPoint, `sink-${count++}`), logger: quiet });
    const sink = createOutputSink({ artifacts: store, toolType: "bash", spillBytes: 1024, logger: quiet });
    const chunk = new TextEncoder().encode(`${"output line\n".repeat(5000)}`);
    for (let i = 0; i < 40; i++) await sink.push(chunk); // 2.4 MB > 1 MiB
    await sink.push("the very end\n");
    const summary = await sink.dump();
    expect(summary.artifactId).toBeUndefined();
    expect(summary.artifactError?.code).toBe("STORAGE_FULL");
    expect(summary.truncated).toBe(true);
    expect(summary.totalBytes).toBe(40 * chunk.byteLength + 13);
    expect(summary.text.endsWith("output line\nthe very end\n")).toBe(true);
    await sink.dispose();
    expect(await openFdCount()).toBe(before);
    expect((await store.listArtifacts()).length).toBe(0);
  });

  it("fails saveArtifact and writeAgentOutput with STORAGE_FULL and keeps what was there", async () => {
    const store = createArtifactStore({ dir: join(mountPoint, `save-${count++}`), logger: quiet });
    const kept = await store.saveArtifact("bash", "small and kept");
    await store.writeAgentOutput("0-Kept", "# kept");
    await expectStowageError(store.saveArtifact("bash", new Uint8Array(2 * 1024 * 1024)), "STORAGE_FULL");
    await expectStowageError(
      store.writeAgentOutput("0-Kept", new Uint8Array(2 * 1024 * 1024)),
      "STORAGE_FULL",
    );
    expect((await store.readArtifact(kept)).text).toBe("small and kept");
    expect((await store.readAgentOutput("0-Kept")).text).toBe("# kept");
    expect((await readdir(store.dir)).sort()).toEqual([".claims", "0-Kept.md", "0.bash.log"]);
  });
});
