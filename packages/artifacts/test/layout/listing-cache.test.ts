import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DirectoryListingCache } from "../../src/layout/listing-cache.js";
import { createArtifactStore } from "../../src/store/artifact-store.js";
import { createInternalUrlRouter } from "../../src/urls/router.js";

const base = await tempDirectory("stowage-artifacts-listing-cache-");
let dirs = 0;

async function directoryWith(...names: string[]): Promise<string> {
  const dir = join(base, `d${dirs++}`);
  await mkdir(dir);
  for (const name of names) await writeFile(join(dir, name), `${name}\n`);
  return dir;
}

/** A cache whose parse records every listing it was given (sorted: readdir has no order). */
function countingCache() {
  const listings: string[][] = [];
  const cache = new DirectoryListingCache((names) => {
    const sorted = [...names].sort();
    listings.push(sorted);
    return sorted;
  });
  return { cache, listings };
}

/** Moves the clock (Date only) past the settling time, as if the directory had changed long ago. */
function settle(): void {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + 60_000);
}

afterEach(() => {
  vi.useRealTimers();
});

describe("DirectoryListingCache", () => {
  it("lists a directory that changed just now on every read (its listing may be racy)", async () => {
    const dir = await directoryWith("0.bash.log");
    const { cache, listings } = countingCache();
    expect(await cache.read(dir, "test")).toEqual(["0.bash.log"]);
    expect(await cache.read(dir, "test")).toEqual(["0.bash.log"]);
    expect(listings).toHaveLength(2);
  });

  it("keeps the listing of a settled, unchanged directory", async () => {
    const dir = await directoryWith("0.bash.log", "1.grep.log");
    settle();
    const { cache, listings } = countingCache();
    for (let i = 0; i < 5; i++) expect(await cache.read(dir, "test")).toEqual(["0.bash.log", "1.grep.log"]);
    expect(listings).toHaveLength(1);
  });

  it.each([
    [
      "a file added",
      (dir: string) => writeFile(join(dir, "2.bash.log"), "x"),
      ["0.bash.log", "1.grep.log", "2.bash.log"],
    ],
    ["a file removed", (dir: string) => rm(join(dir, "1.grep.log")), ["0.bash.log"]],
    [
      "a partial renamed into place",
      (dir: string) => rename(join(dir, "1.grep.log"), join(dir, "1.grep.log.partial")),
      ["0.bash.log", "1.grep.log.partial"],
    ],
  ])("lists again after %s", async (_, change, expected) => {
    const dir = await directoryWith("0.bash.log", "1.grep.log");
    settle();
    const { cache, listings } = countingCache();
    await cache.read(dir, "test");
    await change(dir);
    expect(await cache.read(dir, "test")).toEqual(expected);
    expect(listings).toHaveLength(2);
  });

  it("lists again when asked for a fresh listing", async () => {
    const dir = await directoryWith("0.bash.log");
    settle();
    const { cache, listings } = countingCache();
    await cache.read(dir, "test");
    await cache.read(dir, "test", true);
    expect(listings).toHaveLength(2);
  });

  it("lists again when the path names another directory", async () => {
    const first = await directoryWith("0.bash.log");
    const second = await directoryWith("7.bash.log");
    settle();
    const { cache } = countingCache();
    await cache.read(first, "test");
    await rm(first, { recursive: true });
    await rename(second, first);
    expect(await cache.read(first, "test")).toEqual(["7.bash.log"]);
  });

  it("is null for a missing directory and CONFLICT for a file in its place", async () => {
    const { cache } = countingCache();
    expect(await cache.read(join(base, "missing"), "test")).toBeNull();
    const file = join(base, "a-file");
    await writeFile(file, "x");
    await expectStowageError(cache.read(file, "test"), "CONFLICT", "NOT_A_DIRECTORY");
  });
});

describe("artifact:// reads with a kept listing", () => {
  async function settledRouter() {
    const dir = await directoryWith();
    const store = createArtifactStore({ dir });
    await store.saveArtifact("bash", "first\n");
    settle();
    const router = createInternalUrlRouter({ artifacts: store });
    expect((await router.read("artifact://0")).text).toBe("first\n");
    return { dir, store, router };
  }

  it("sees an artifact another writer published after the listing was kept", async () => {
    const { dir, router } = await settledRouter();
    await writeFile(join(dir, "1.grep.log"), "second\n");
    expect((await router.read("artifact://1")).text).toBe("second\n");
  });

  it("still refuses an id that became ambiguous", async () => {
    const { dir, router } = await settledRouter();
    await writeFile(join(dir, "0.grep.log"), "other\n");
    await expectStowageError(router.read("artifact://0"), "CONFLICT", "AMBIGUOUS_ARTIFACT");
  });

  it("reports an artifact removed after the listing was kept as NOT_FOUND", async () => {
    const { dir, router } = await settledRouter();
    await rm(join(dir, "0.bash.log"));
    await expectStowageError(router.read("artifact://0"), "NOT_FOUND", "ARTIFACT_NOT_FOUND");
  });
});
