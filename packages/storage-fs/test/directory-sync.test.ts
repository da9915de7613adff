import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StowageError } from "@stowage/core";
import { afterAll, describe, expect, it } from "vitest";
import { createDirectorySync } from "../src/directory-sync.js";

const dir = await mkdtemp(join(tmpdir(), "stowage-dirsync-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("createDirectorySync", () => {
  it("answers every caller, sharing fsyncs between concurrent callers", async () => {
    const sync = createDirectorySync();
    await mkdir(join(dir, "a"));
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => sync(join(dir, "a"))));
    expect(results.every((result) => result.status === "fulfilled")).toBe(true);
    // Sequential callers each get their own fsync, and still succeed.
    for (let i = 0; i < 3; i++) await sync(join(dir, "a"));
  });

  it("a caller that arrives during an fsync waits for the next one, not the one already running", async () => {
    const sync = createDirectorySync();
    await mkdir(join(dir, "b"));
    const first = sync(join(dir, "b"));
    // Let the first fsync start, then ask again: the answer must be a different, later promise.
    await new Promise((resolve) => setImmediate(resolve));
    const second = sync(join(dir, "b"));
    const third = sync(join(dir, "b"));
    expect(second).not.toBe(first);
    expect(third).toBe(second);
    await Promise.all([first, second, third]);
  });

  it("passes a failure to every caller that shared the fsync", async () => {
    const sync = createDirectorySync();
    const missing = join(dir, "missing");
    const results = await Promise.allSettled([sync(missing), sync(missing)]);
    for (const result of results) {
      expect(result.status).toBe("rejected");
      const reason = (result as PromiseRejectedResult).reason as { code?: string };
      expect(reason.code === "ENOENT" || StowageError.is(reason, "NOT_FOUND")).toBe(true);
    }
  });
});
