import { lstat, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { createFsObjectStore, type FsObjectStore } from "@stowage/storage-fs";
import { tempDirectory, withoutJournal } from "@stowage/test-support";
import { beforeEach, describe, expect, it } from "vitest";

const base = await tempDirectory("stowage-fs-symlinks-");
const bytes = (text: string) => new TextEncoder().encode(text);
let case_ = 0;

/** A fresh root with `outside/secret` next to it (where an escaping write or read would land). */
async function setup() {
  const dir = join(base, String(case_++));
  const root = join(dir, "root");
  const outside = join(dir, "outside");
  await mkdir(root, { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, "secret"), "outside the root");
  return { root, outside, store: createFsObjectStore({ root }) };
}

async function keysOf(store: FsObjectStore, prefix = ""): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.keys({ prefix })) keys.push(key);
  const paged: string[] = [];
  for await (const page of store.keys({ prefix }).byPage()) paged.push(...page);
  expect(paged).toEqual(keys);
  return keys;
}

async function outsideUnchanged(outside: string): Promise<void> {
  expect((await readdir(outside)).sort()).toEqual(["secret"]);
  expect(await readFile(join(outside, "secret"), "utf8")).toBe("outside the root");
}

// Hostile-input rows: where a link is planted below the root, and the key every operation uses.
const PLANTED_DIRECTORY_LINKS: ReadonlyArray<[string, string, string]> = [
  ["a link as the first directory", "sub", "sub/secret"],
  ["a link deeper down", "a/b", "a/b/secret"],
  ["a link above a missing directory", "sub", "sub/new/deeper/x"],
];

describe("a symbolic link to a directory below the root is never followed", () => {
  for (const [why, linkAt, key] of PLANTED_DIRECTORY_LINKS) {
    describe(why, () => {
      let root: string;
      let outside: string;
      let store: FsObjectStore;

      beforeEach(async () => {
        ({ root, outside, store } = await setup());
        await mkdir(join(root, linkAt, ".."), { recursive: true });
        await symlink(outside, join(root, linkAt));
        await store.put("inside/kept", bytes("inside"));
      });

      const refused = (promise: Promise<unknown>) => expectStowageError(promise, "FORBIDDEN");

      it("every operation through it is FORBIDDEN (SYMLINK_REFUSED) and nothing outside changes", async () => {
        const error = await refused(store.put(key, bytes("escaped")));
        expect(error.reason).toBe("SYMLINK_REFUSED");
        await refused(store.put(key, bytes("escaped"), { ifNoneMatch: "*" }));
        await refused(store.get(key));
        await refused(store.stream(key));
        await refused(store.head(key));
        await refused(store.touch(key));
        await refused(store.delete(key));
        await refused(store.move(key, "inside/moved"));
        await refused(store.move("inside/kept", key));
        await refused(store.list({ prefix: `${linkAt}/` }));
        await refused(keysOf(store, `${linkAt}/`));
        await outsideUnchanged(outside);
        expect(await store.get("inside/kept")).toEqual(bytes("inside"));
      });

      it("listing the root skips the link", async () => {
        expect((await store.list()).items.map((item) => item.key)).toEqual(["inside/kept"]);
        expect(await keysOf(store)).toEqual(["inside/kept"]);
        expect(await store.removeStaleTempFiles({ olderThanMs: 0 })).toBe(0);
      });
    });
  }
});

describe("a symbolic link planted at a key is not an object and is never followed", () => {
  let root: string;
  let outside: string;
  let store: FsObjectStore;

  beforeEach(async () => {
    ({ root, outside, store } = await setup());
    await symlink(join(outside, "secret"), join(root, "key"));
  });

  it("reads, touches and moves of it are FORBIDDEN", async () => {
    for (const operation of [
      () => store.get("key"),
      () => store.stream("key"),
      () => store.head("key"),
      () => store.touch("key"),
      () => store.move("key", "elsewhere"),
    ]) {
      expect((await expectStowageError(operation(), "FORBIDDEN")).reason).toBe("SYMLINK_REFUSED");
    }
    await outsideUnchanged(outside);
  });

  it("a put replaces the link with a file inside the root; a delete removes the link only", async () => {
    await expectStowageError(store.put("key", bytes("x"), { ifNoneMatch: "*" }), "ALREADY_EXISTS");
    await store.put("key", bytes("inside now"));
    expect((await lstat(join(root, "key"))).isFile()).toBe(true);
    expect(await store.get("key")).toEqual(bytes("inside now"));
    await outsideUnchanged(outside);
    await symlink(join(outside, "secret"), join(root, "other"));
    await store.delete("other");
    await outsideUnchanged(outside);
    expect(withoutJournal(await readdir(root)).sort()).toEqual(["key"]);
  });
});

describe("a directory swapped for a link while an operation runs (injected timing)", () => {
  it("a put whose directory becomes a link mid-write still lands in the directory it opened", async () => {
    const { root, outside, store } = await setup();
    await store.put("sub/first", bytes("1"));
    let swapped = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (!swapped) {
          swapped = true;
          controller.enqueue(bytes("written while "));
          // The attacker's move: the real directory goes away, a link to outside takes its name.
          await rename(join(root, "sub"), join(root, "sub-real"));
          await symlink(outside, join(root, "sub"));
          return;
        }
        controller.enqueue(bytes("the directory was swapped"));
        controller.close();
      },
    });
    await store.put("sub/x", body);
    await outsideUnchanged(outside);
    expect(await readFile(join(root, "sub-real", "x"), "utf8")).toBe(
      "written while the directory was swapped",
    );
    await expectStowageError(store.get("sub/x"), "FORBIDDEN");
  });

  // The listing of items and the listing of names walk the same way; each is attacked mid-walk.
  const listings = {
    iterate: async function* (store: FsObjectStore) {
      for await (const item of store.iterate()) yield item.key;
    },
    keys: (store: FsObjectStore) => store.keys(),
    "keys by page": async function* (store: FsObjectStore) {
      for await (const page of store.keys().byPage()) yield* page;
    },
  };
  for (const [listing, keysFrom] of Object.entries(listings)) {
    it(`${listing}: a listing whose subdirectory becomes a link while it runs does not list outside files`, async () => {
      const { root, outside, store } = await setup();
      await store.put("a/1", bytes("1"));
      await store.put("b/1", bytes("1"));
      const seen: string[] = [];
      for await (const key of keysFrom(store)) {
        seen.push(key);
        if (key === "a/1") {
          await rm(join(root, "b"), { recursive: true });
          await symlink(outside, join(root, "b"));
        }
      }
      expect(seen).toEqual(["a/1"]);
      await outsideUnchanged(outside);
    });
  }
});

describe("the root itself is the caller's", () => {
  it("a link given as the root is followed, for keys in it and below it", async () => {
    const { root, outside } = await setup();
    const link = `${root}-link`;
    await symlink(outside, link);
    const store = createFsObjectStore({ root: link });
    expect(await store.get("secret")).toEqual(bytes("outside the root"));
    await store.put("a/b", bytes("through the given link"));
    expect(await readFile(join(outside, "a", "b"), "utf8")).toBe("through the given link");
  });

  it("a root removed under a live store is made again by the next put", async () => {
    const { root, store } = await setup();
    await store.put("top", bytes("1"));
    await store.put("deep/er", bytes("2"));
    await rm(root, { recursive: true });
    expect(await store.get("top")).toBeNull();
    expect(await store.get("deep/er")).toBeNull();
    expect((await store.list()).items).toEqual([]);
    await store.put("top", bytes("3"));
    await store.put("deep/er", bytes("4"));
    expect(await store.get("top")).toEqual(bytes("3"));
    expect(await store.get("deep/er")).toEqual(bytes("4"));
  });
});
