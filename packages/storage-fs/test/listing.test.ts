import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, unlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeObjectStoreConformance } from "@stowage/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SYNC_READ_MAX_DIRECTORY_BYTES } from "../src/directory-snapshot.js";
import { createFsObjectStore, type FsObjectStore } from "../src/fs-object-store.js";

const base = await mkdtemp(join(tmpdir(), "stowage-fs-listing-"));
const text = (value: string) => new TextEncoder().encode(value);
/** A directory is snapshotted only once it has been unchanged longer than a timestamp tick. */
const letDirectorySettle = () => new Promise((resolve) => setTimeout(resolve, 250));
const keysOf = (items: { key: string }[]) => items.map((item) => item.key);
/** Enough entries in one directory for the listing to keep a snapshot of it (256 and more). */
const MANY = 600;
const name = (i: number) => `k-${String(i).padStart(4, "0")}`;

// The small synchronous write path is taken only with fsync off: run the whole contract on it too.
describeObjectStoreConformance({
  name: "fs object store, fsync off",
  createStore: (namespace) => createFsObjectStore({ root: join(base, namespace), fsync: false }),
  destroyStore: async (_store, namespace) => rm(join(base, namespace), { recursive: true, force: true }),
});

async function listAll(
  store: FsObjectStore,
  prefix: string,
  limit: number,
  between?: (page: number) => Promise<void>,
) {
  const keys: string[] = [];
  let cursor: string | undefined;
  let page = 0;
  do {
    const result = await store.list({ prefix, cursor, limit });
    keys.push(...keysOf(result.items));
    cursor = result.cursor;
    await between?.(page++);
  } while (cursor);
  return keys;
}

describe("listing large directories", () => {
  let root: string;
  let store: FsObjectStore;

  beforeEach(async () => {
    root = await mkdtemp(join(base, "disk-"));
    store = createFsObjectStore({ root, fsync: false });
    for (let i = 0; i < MANY; i++) await store.put(`big/${name(i)}`, text(`v${i}`));
    await letDirectorySettle();
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("pages through a large directory in key order, the same keys as iterate", async () => {
    const expected = Array.from({ length: MANY }, (_, i) => `big/${name(i)}`);
    expect(await listAll(store, "big/", 97)).toEqual(expected);
    const iterated: string[] = [];
    for await (const item of store.iterate({ prefix: "big/" })) iterated.push(item.key);
    expect(iterated).toEqual(expected);
    const named: string[] = [];
    for await (const key of store.keys({ prefix: "big/" })) named.push(key);
    expect(named).toEqual(expected);
    // A second pass reads from the directory's snapshot: same answer.
    expect(await listAll(store, "big/", 250)).toEqual(expected);
  });

  it("hands out a directory's keys by page: up to the page size, one directory's files a page", async () => {
    await store.put("big/sub/inner", text("in a subdirectory"));
    await store.put("big/~last", text("after the subdirectory"));
    const pagesOf = async (pageSize?: number) => {
      const pages: (readonly string[])[] = [];
      for await (const page of store.keys({ prefix: "big/", pageSize }).byPage()) pages.push(page);
      return pages;
    };
    const files = Array.from({ length: MANY }, (_, i) => `big/${name(i)}`);
    // `big/sub/` sorts after `big/k-…` and before `big/~last`: the walk enters it between them.
    expect(await pagesOf()).toEqual([files, ["big/sub/inner"], ["big/~last"]]);
    expect((await pagesOf(250)).map((page) => page.length)).toEqual([250, 250, 100, 1, 1]);
    expect((await pagesOf(250)).flat()).toEqual([...files, "big/sub/inner", "big/~last"]);
  });

  it("gives sizes right after a names-only listing kept the directory's snapshot (no stats in it yet)", async () => {
    let named = 0;
    for await (const _key of store.keys({ prefix: "big/" })) named++;
    expect(named).toBe(MANY);
    // The snapshot `keys` kept holds names only; this listing reads the stats into it, the next from it.
    for (let pass = 0; pass < 2; pass++) {
      const { items } = await store.list({ prefix: "big/", limit: MANY });
      expect(items.map((item) => [item.key, item.size])).toEqual(
        Array.from({ length: MANY }, (_, i) => [`big/${name(i)}`, `v${i}`.length]),
      );
    }
  });

  it("sees keys added and removed between pages", async () => {
    await listAll(store, "big/", 100); // the directory's snapshot is now kept
    const keys = await listAll(store, "big/", 100, async (page) => {
      if (page !== 1) return;
      await store.put(`big/${name(450)}x`, text("added after the cursor"));
      await store.put(`big/${name(10)}x`, text("added before the cursor: not in this listing"));
      await store.delete(`big/${name(500)}`);
    });
    expect(keys).toContain(`big/${name(450)}x`);
    expect(keys).not.toContain(`big/${name(10)}x`);
    expect(keys).not.toContain(`big/${name(500)}`);
    expect(keys).toHaveLength(MANY);
    expect(keys).toEqual([...keys].sort());
  });

  it("reports sizes and times that follow puts, touches and deletes", async () => {
    await utimes(join(root, "big", name(7)), new Date(0), new Date(0));
    await letDirectorySettle();
    const first = await store.list({ prefix: "big/", limit: MANY });
    expect(first.items[3]).toMatchObject({ key: `big/${name(3)}`, size: 2 });
    expect(first.items[7]!.lastModified.getTime()).toBe(0);
    // Stats now come from the directory's snapshot; each change below must still show.
    await store.touch(`big/${name(7)}`);
    await store.put(`big/${name(3)}`, text("longer value"));
    await store.delete(`big/${name(5)}`);
    const items = new Map((await store.list({ prefix: "big/", limit: MANY })).items.map((i) => [i.key, i]));
    expect(items.get(`big/${name(3)}`)?.size).toBe("longer value".length);
    expect(items.get(`big/${name(7)}`)!.lastModified.getTime()).toBeGreaterThan(0);
    expect(items.has(`big/${name(5)}`)).toBe(false);
  });

  it("sees a touch alone (no other change in the directory)", async () => {
    await utimes(join(root, "big", name(7)), new Date(0), new Date(0));
    await letDirectorySettle();
    expect((await store.list({ prefix: "big/", limit: MANY })).items[7]!.lastModified.getTime()).toBe(0);
    await store.touch(`big/${name(7)}`);
    expect(
      (await store.list({ prefix: "big/", limit: MANY })).items[7]!.lastModified.getTime(),
    ).toBeGreaterThan(0);
  });

  it("leaves out a file another program deleted, and still fills the page", async () => {
    await store.list({ prefix: "big/", limit: 10 });
    await unlink(join(root, "big", name(1)));
    const page = await store.list({ prefix: "big/", limit: 10 });
    expect(keysOf(page.items)).not.toContain(`big/${name(1)}`);
    expect(page.items).toHaveLength(10);
  });

  it("resumes inside nested directories and honours a partial-segment prefix", async () => {
    for (let i = 0; i < 300; i++) await store.put(`big/sub/${name(i)}`, text("s"));
    await writeFile(join(root, "big", "k-0001-foreign"), "f");
    await letDirectorySettle();
    const all = await listAll(store, "big/", 64);
    expect(all).toEqual([...all].sort());
    expect(all).toHaveLength(MANY + 300 + 1);
    expect(await listAll(store, "big/k-00", 7)).toEqual([
      ...Array.from({ length: 2 }, (_, i) => `big/${name(i)}`),
      "big/k-0001-foreign",
      ...Array.from({ length: 98 }, (_, i) => `big/${name(i + 2)}`),
    ]);
    const resumed = await store.list({ prefix: "big/", cursor: `big/sub/${name(149)}`, limit: 3 });
    expect(keysOf(resumed.items)).toEqual([
      `big/sub/${name(150)}`,
      `big/sub/${name(151)}`,
      `big/sub/${name(152)}`,
    ]);
  });
});

describe("reading a directory: on the event loop when small, through the thread pool when not", () => {
  it("lists a directory larger than the synchronous read's bound as it lists a small one", async () => {
    const root = await mkdtemp(join(base, "read-"));
    try {
      // 5,000 names of 20 characters: well over 64 KiB of directory on ext4, tmpfs, btrfs and xfs.
      const large = (i: number) => `entry-${String(i).padStart(14, "0")}`;
      mkdirSync(join(root, "large"));
      mkdirSync(join(root, "small"));
      for (let i = 4_999; i >= 0; i--) writeFileSync(join(root, "large", large(i)), "l");
      for (const file of ["b", "a", "c"]) writeFileSync(join(root, "small", file), "s");
      expect(statSync(join(root, "large")).size).toBeGreaterThan(SYNC_READ_MAX_DIRECTORY_BYTES);
      expect(statSync(join(root, "small")).size).toBeLessThanOrEqual(SYNC_READ_MAX_DIRECTORY_BYTES);

      const store = createFsObjectStore({ root, fsync: false });
      const listed: string[] = [];
      for await (const page of store.keys().byPage()) listed.push(...page);
      expect(listed).toEqual([
        ...Array.from({ length: 5_000 }, (_, i) => `large/${large(i)}`),
        "small/a",
        "small/b",
        "small/c",
      ]);
      expect(await listAll(store, "large/", 1_000)).toHaveLength(5_000);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
