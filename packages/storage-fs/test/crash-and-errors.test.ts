import { execFileSync } from "node:child_process";
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { TEMP_FILE_PREFIX } from "@stowage/core/fs";
import { expectStowageError } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import {
  filesUnder,
  inCi,
  isRoot,
  runChild,
  spawnChild,
  tempDirectory,
  withoutJournal,
} from "@stowage/test-support";
import { describe, expect, it } from "vitest";

const base = await tempDirectory("stowage-fs-crash-");
const slowPut = new URL("./children/slow-put.ts", import.meta.url);
const putSameBlobs = new URL("./children/put-same-blobs.ts", import.meta.url);
const putOnce = new URL("./children/put-once.ts", import.meta.url);

describe("crash mid-write", () => {
  it("a process killed while writing leaves no visible object, only a sweepable temp file", async () => {
    const root = join(base, "crash");
    const child = spawnChild(slowPut, [root, "sessions/big.log"]);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("writing")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`child exited early with ${code}`)));
    });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("close", resolve));

    const store = createFsObjectStore({ root });
    expect(await store.head("sessions/big.log")).toBeNull();
    expect(await store.get("sessions/big.log")).toBeNull();
    expect((await store.list()).items).toEqual([]);
    const leftovers = await filesUnder(root);
    expect(leftovers).toHaveLength(1);
    expect(leftovers[0]!.startsWith(`sessions/${TEMP_FILE_PREFIX}`)).toBe(true);
    expect(await store.removeStaleTempFiles({ olderThanMs: 0 })).toBe(1);
    expect(await filesUnder(root)).toEqual([]);
  });
});

describe("two processes putting the same blobs at once", () => {
  it("both succeed and each blob is one file", async () => {
    const root = join(base, "shared-blobs");
    const count = 200;
    const [first, second] = await Promise.all([
      runChild(putSameBlobs, [root, String(count)]),
      runChild(putSameBlobs, [root, String(count)]),
    ]);
    expect(first.stderr).toBe("");
    expect(second.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    const hashes = JSON.parse(first.stdout) as string[];
    expect(JSON.parse(second.stdout)).toEqual(hashes);
    expect(new Set(hashes).size).toBe(count);
    // Each process leaves its journal segment (it exited before its checkpoint): see journal.test.ts.
    const files = withoutJournal(await filesUnder(root));
    expect(files).toEqual(hashes.map((hash) => `${hash.slice(0, 2)}/${hash}`).sort());
  });
});

describe("file-system errors map to typed errors", () => {
  it.skipIf(!isRoot)("a full disk fails with STORAGE_FULL and loses nothing", async () => {
    const root = join(base, "full");
    await mkdir(root, { recursive: true });
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", root]);
    } catch (err) {
      if (inCi) throw err;
      console.warn(`[stowage] ENOSPC test skipped: cannot mount a tmpfs here (${(err as Error).message})`);
      return;
    }
    try {
      const store = createFsObjectStore({ root });
      await store.put("kept", new Uint8Array(1000).fill(1));
      await expectStowageError(store.put("too-big", new Uint8Array(1024 * 1024)), "STORAGE_FULL");
      const streamed = new ReadableStream<Uint8Array>({
        pull: (controller) => controller.enqueue(new Uint8Array(64 * 1024)),
      });
      await expectStowageError(store.put("too-big-stream", streamed), "STORAGE_FULL");
      // A small put (journaled) on a disk with no room left: refused, the journal still whole.
      await writeFile(join(root, "filler"), new Uint8Array(1024 * 1024)).catch(() => {});
      await expectStowageError(store.put("small", new Uint8Array(8 * 1024).fill(2)), "STORAGE_FULL");
      await rm(join(root, "filler"));
      expect(withoutJournal(await filesUnder(root))).toEqual(["kept"]);
      // Room again: the next small put goes through, the earlier one kept.
      await store.put("small", new Uint8Array(8 * 1024).fill(2));
      expect((await store.get("small"))?.byteLength).toBe(8 * 1024);
      expect((await store.get("kept"))?.byteLength).toBe(1000);
    } finally {
      // Lazily: the store may still hold its journal segment open (closed 100–200 ms after its last put).
      execFileSync("umount", ["--lazy", root]);
    }
  });

  it.skipIf(!isRoot)("a directory the process may not write fails with FORBIDDEN", async () => {
    const root = join(base, "read-only");
    await createFsObjectStore({ root }).put("existing", new Uint8Array(3));
    await chmod(root, 0o755);
    // `nobody` may read but not write a directory owned by root.
    const { stdout, stderr } = await runChild(putOnce, [root, "new-key", "10"], {
      uid: 65534,
      gid: 65534,
    });
    expect(stderr).toBe("");
    expect(JSON.parse(stdout)).toEqual({ ok: false, code: "FORBIDDEN" });
    expect(withoutJournal(await filesUnder(root))).toEqual(["existing"]);
  });

  if (!isRoot) {
    console.warn(
      "[stowage] ENOSPC and EACCES tests skipped: they need root (tmpfs mount, a child running as nobody)",
    );
  }
});
