import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { TEMP_FILE_PREFIX } from "@stowage/core/fs";
import { describeObjectStoreConformance, expectStowageError, HOSTILE_KEYS } from "@stowage/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFsObjectStore, type FsObjectStore } from "../src/fs-object-store.js";

const base = await mkdtemp(join(tmpdir(), "stowage-fs-"));
const text = (value: string) => new TextEncoder().encode(value);

// The direct-transfer block reaches the store of the running test through its in-process handler.
let current: FsObjectStore | undefined;
describeObjectStoreConformance({
  name: "fs object store",
  createStore: (namespace) => {
    current = createFsObjectStore({
      root: join(base, namespace),
      directUrls: {
        baseUrl: "http://stowage.test/direct",
        secret: "a-conformance-secret-of-32-bytes-or-more",
      },
    });
    return current;
  },
  destroyStore: async (_store, namespace) => rm(join(base, namespace), { recursive: true, force: true }),
  directTransfer: {
    fetch: async (input, init) => current!.handleDirectRequest!(new Request(input, init)),
  },
});

describe("fs object store on disk", () => {
  let root: string;
  let store: FsObjectStore;

  beforeEach(async () => {
    root = await mkdtemp(join(base, "disk-"));
    store = createFsObjectStore({ root });
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("stores each key as a plain file at its path under root", async () => {
    await store.put("sessions/abc/1.bash.log", text("full output"));
    expect(await readFile(join(root, "sessions", "abc", "1.bash.log"), "utf8")).toBe("full output");
    expect(store.uriFor("sessions/abc/1.bash.log")).toBe(
      pathToFileURL(join(root, "sessions", "abc", "1.bash.log")).href,
    );
    expect(store.root).toBe(root);
  });

  it("lists files placed in the directory by other programs", async () => {
    await mkdir(join(root, "dir"), { recursive: true });
    await writeFile(join(root, "dir", "foreign.txt"), "hello");
    const page = await store.list();
    expect(page.items.map((item) => [item.key, item.size])).toEqual([["dir/foreign.txt", 5]]);
  });

  it("leaves no temp file behind and never lists one", async () => {
    await store.put("a/b", text("x"));
    await store.put("a/b", text("yy"));
    await store.put("a/c", text("z"), { ifNoneMatch: "*" });
    await expectStowageError(store.put("a/c", text("z"), { ifNoneMatch: "*" }), "ALREADY_EXISTS");
    expect((await readdir(join(root, "a"))).sort()).toEqual(["b", "c"]);
    await writeFile(join(root, "a", `${TEMP_FILE_PREFIX}deadbeef`), "partial");
    expect((await store.list()).items.map((item) => item.key)).toEqual(["a/b", "a/c"]);
  });

  it("rejects keys that use the reserved temp-file prefix", async () => {
    for (const key of [`${TEMP_FILE_PREFIX}x`, `a/${TEMP_FILE_PREFIX}1/b`]) {
      await expectStowageError(store.put(key, text("x")), "INVALID_INPUT");
      await expectStowageError(store.get(key), "INVALID_INPUT");
      await expectStowageError(() => store.uriFor(key), "INVALID_INPUT");
    }
  });

  it("uriFor rejects every hostile key and never leaves root", async () => {
    for (const { value } of HOSTILE_KEYS) {
      await expectStowageError(() => store.uriFor(value as string), "INVALID_INPUT");
    }
  });

  it("uriFor percent-encodes what a file URL must not carry raw", () => {
    // Written by hand from RFC 8089 / WHATWG URL: space → %20, "#" → %23, "%" → %25, é → %C3%A9.
    expect(store.uriFor("a b/#1 100%/é.txt")).toBe(`file://${root}/a%20b/%231%20100%25/%C3%A9.txt`);
  });

  it("reports CONFLICT when a key and a key below it collide", async () => {
    await store.put("parent", text("file"));
    await expectStowageError(store.put("parent/child", text("x")), "CONFLICT");
    await store.put("dir/child", text("x"));
    await expectStowageError(store.put("dir", text("x")), "CONFLICT");
    await expectStowageError(store.move("parent", "dir"), "CONFLICT");
    // A directory of keys is not an object: reads see nothing there and delete leaves it alone.
    expect(await store.get("dir")).toBeNull();
    expect(await store.head("dir")).toBeNull();
    expect(await store.stream("dir")).toBeNull();
    await store.delete("dir");
    expect(await readFile(join(root, "dir", "child"), "utf8")).toBe("x");
    await expectStowageError(store.move("dir", "elsewhere"), "NOT_FOUND");
  });

  it("does not treat symbolic links as objects", async () => {
    await writeFile(join(root, "real"), "x");
    await symlink(join(root, "real"), join(root, "link"));
    await symlink("/etc", join(root, "etc-link"));
    expect((await store.list()).items.map((item) => item.key)).toEqual(["real"]);
  });

  it("removes stale temp files of abandoned writes", async () => {
    await mkdir(join(root, "x"), { recursive: true });
    await writeFile(join(root, "x", `${TEMP_FILE_PREFIX}0123`), "partial");
    await store.put("x/kept", text("kept"));
    expect(await store.removeStaleTempFiles({ olderThanMs: 60_000 })).toBe(0);
    expect(await store.removeStaleTempFiles({ olderThanMs: 0 })).toBe(1);
    expect(await readdir(join(root, "x"))).toEqual(["kept"]);
  });

  it("works with fsync disabled", async () => {
    const fast = createFsObjectStore({ root, fsync: false });
    await fast.put("k", text("v"));
    expect(new TextDecoder().decode((await fast.get("k"))!)).toBe("v");
  });

  it.each([
    ["no options", undefined],
    ["empty root", { root: "" }],
    ["numeric root", { root: 5 }],
    ["fsync not boolean", { root: "/tmp/x", fsync: "yes" }],
  ])("rejects bad options: %s", async (_why, options) => {
    await expectStowageError(() => createFsObjectStore(options as never), "INVALID_INPUT");
  });
});
