import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StowageError } from "../../src/errors.js";
import { ensureDirectory, TEMP_FILE_PREFIX } from "../../src/fs/temp-file.js";
import { writeFileAtomic } from "../../src/fs/write-file-atomic.js";

// Core sits below @stowage/test-support, so it makes its own temp directory.
const dir = await mkdtemp(join(tmpdir(), "stowage-atomic-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("writeFileAtomic", () => {
  it("creates missing directories and writes strings, bytes and streams", async () => {
    const path = join(dir, "a", "b", "file.txt");
    expect(await writeFileAtomic(path, "héllo")).toBe(6);
    expect(await readFile(path, "utf8")).toBe("héllo");
    await writeFileAtomic(path, Uint8Array.of(1, 2, 3));
    expect([...(await readFile(path))]).toEqual([1, 2, 3]);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(Uint8Array.of(9));
        controller.enqueue(Uint8Array.of(8));
        controller.close();
      },
    });
    expect(await writeFileAtomic(path, stream, { fsync: false })).toBe(2);
    expect([...(await readFile(path))]).toEqual([9, 8]);
    expect(await readdir(join(dir, "a", "b"))).toEqual(["file.txt"]);
  });

  it("keeps the old content and leaves no temp file when the new body fails", async () => {
    const path = join(dir, "keep.txt");
    await writeFile(path, "old");
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(1000));
        controller.error(new Error("source died"));
      },
    });
    await expect(writeFileAtomic(path, failing)).rejects.toThrow(/source died/);
    expect(await readFile(path, "utf8")).toBe("old");
    expect((await readdir(dir)).filter((name) => name.startsWith(TEMP_FILE_PREFIX))).toEqual([]);
  });

  it("reports CONFLICT when a parent directory is a file", async () => {
    await writeFile(join(dir, "plain"), "x");
    const err = await writeFileAtomic(join(dir, "plain", "child"), "x").catch((e: unknown) => e);
    expect(StowageError.is(err, "CONFLICT")).toBe(true);
    const direct = await ensureDirectory(join(dir, "plain", "sub")).catch((e: unknown) => e);
    expect(StowageError.is(direct, "CONFLICT")).toBe(true);
  });
});
