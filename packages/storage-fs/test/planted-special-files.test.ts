import { execFileSync } from "node:child_process";
import { constants } from "node:fs";
import { mkdir, open } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { afterAll, describe, expect, it } from "vitest";

const base = await tempDirectory("stowage-fs-special-");
const bytes = (text: string) => new TextEncoder().encode(text);
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers) await close();
});

// Something other than a regular file planted below the root, at a key: none of them is an
// object. A FIFO is the hostile one: opened for reading without O_NONBLOCK it waits for a
// writer forever, and a few such reads hold every libuv thread of the process.
const PLANTED: ReadonlyArray<[string, (path: string) => Promise<void>]> = [
  ["a FIFO", async (path) => void execFileSync("mkfifo", [path])],
  [
    "a FIFO a writer holds open, with bytes waiting",
    async (path) => {
      execFileSync("mkfifo", [path]);
      // A writer opens without blocking only once a reader holds the FIFO: this one does.
      const reader = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
      const writer = await open(path, constants.O_WRONLY | constants.O_NONBLOCK);
      await writer.write("not an object");
      closers.push(async () => {
        await writer.close();
        await reader.close();
      });
    },
  ],
  ["a directory", async (path) => void (await mkdir(path))],
  [
    "a Unix socket",
    async (path) => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(path, resolve));
      closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    },
  ],
];

describe("a special file planted at a key reads as absent, at once", () => {
  for (const [what, plant] of PLANTED) {
    it(`${what}: get, stream and head give null; listing skips it; other keys still read`, async () => {
      const root = join(base, what.replace(/\W/g, "-"));
      const store = createFsObjectStore({ root });
      await store.put("kept.txt", bytes("kept"));
      await plant(join(root, "planted.txt"));
      // More reads than libuv has threads: a blocking open would stall everything after them.
      const reads = await Promise.all(Array.from({ length: 8 }, () => store.get("planted.txt")));
      expect(reads).toEqual(Array(8).fill(null));
      expect(await store.stream("planted.txt")).toBeNull();
      expect(await store.head("planted.txt")).toBeNull();
      expect((await store.list()).items.map((item) => item.key)).toEqual(["kept.txt"]);
      const names: string[] = [];
      for await (const key of store.keys()) names.push(key);
      expect(names).toEqual(["kept.txt"]);
      const pages: (readonly string[])[] = [];
      for await (const page of store.keys().byPage()) pages.push(page);
      expect(pages).toEqual([["kept.txt"]]);
      expect(new TextDecoder().decode((await store.get("kept.txt"))!)).toBe("kept");
    });
  }
});
