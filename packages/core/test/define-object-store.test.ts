import { describe, expect, it } from "vitest";
import { defineObjectStore, type ObjectStoreDriver } from "../src/define-object-store.js";
import { StowageError } from "../src/errors.js";
import { createMemoryObjectStore } from "../src/memory-object-store.js";
import { expectStowageError } from "../src/testing/expect-stowage-error.js";
import { describeObjectStoreConformance } from "../src/testing/object-store-conformance.js";

/** A driver with only the required methods, delegating to a memory store. */
function minimalDriver(
  overrides: Partial<ObjectStoreDriver> = {},
  backing = createMemoryObjectStore(),
): ObjectStoreDriver {
  return {
    name: "minimal",
    atomicCreateOnly: true,
    keepsContentType: true,
    put: (key, body, options) => backing.put(key, body, options),
    get: (key) => backing.get(key),
    stream: (key) => backing.stream(key),
    head: (key) => backing.head(key),
    delete: (key) => backing.delete(key),
    list: (options) => backing.list(options),
    ...overrides,
  };
}

// The fallbacks for move, touch and iterate must satisfy the same contract as native versions.
describeObjectStoreConformance({
  name: "driver without move/touch/iterate",
  createStore: () => defineObjectStore(minimalDriver()),
});

/** `keys` from the backing store's keys in batches of `size`, recording what the walk saw. */
function batchedKeys(
  size: number,
  log: { closed: number; calls: string[]; pageSizes: number[] } = { closed: 0, calls: [], pageSizes: [] },
) {
  const backing = createMemoryObjectStore();
  const driver = minimalDriver(
    {
      async *keys({ prefix, pageSize }) {
        log.calls.push(prefix);
        log.pageSizes.push(pageSize);
        let batch: string[] = [];
        try {
          for await (const key of backing.keys({ prefix })) {
            batch.push(key);
            if (batch.length === size) {
              yield batch;
              batch = [];
            }
          }
          if (batch.length > 0) yield batch;
        } finally {
          log.closed++;
        }
      },
    },
    backing,
  );
  return { store: defineObjectStore(driver), log };
}

// A driver's own `keys` (in batches) must meet the contract as the fallback does.
describeObjectStoreConformance({
  name: "driver with keys in batches",
  createStore: () => batchedKeys(3).store,
});

describe("defineObjectStore", () => {
  it("hands out a driver's batches of keys one by one, closes its walk on a break, and maps its errors", async () => {
    const { store, log } = batchedKeys(2);
    for (const key of ["a", "b", "c", "d", "e"]) await store.put(key, new Uint8Array([1]));
    const all: string[] = [];
    for await (const key of store.keys()) all.push(key);
    expect(all).toEqual(["a", "b", "c", "d", "e"]);
    expect(log.closed).toBe(1);

    for await (const key of store.keys()) if (key === "c") break;
    expect(log.closed).toBe(2);

    const controller = new AbortController();
    const seen: string[] = [];
    const aborted = async () => {
      for await (const key of store.keys({ signal: controller.signal })) {
        seen.push(key);
        if (key === "a") controller.abort(new Error("stop"));
      }
    };
    await expectStowageError(aborted(), "ABORTED");
    expect(seen).toEqual(["a"]);
    expect(log.closed).toBe(3);

    log.calls.length = 0;
    const hostile = async () => {
      for await (const _ of store.keys({ prefix: "../" })) break;
    };
    await expectStowageError(hostile(), "INVALID_INPUT");
    const hostilePages = async () => {
      for await (const _ of store.keys({ prefix: "../" }).byPage()) break;
    };
    await expectStowageError(hostilePages(), "INVALID_INPUT");
    expect(log.calls).toEqual([]);

    const failing = defineObjectStore(
      minimalDriver({
        // biome-ignore lint/correctness/useYield: a walk that fails before its first batch
        async *keys() {
          throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
        },
      }),
    );
    const drain = async () => {
      for await (const _ of failing.keys({ prefix: "p/" })) break;
    };
    const err = await expectStowageError(drain(), "FORBIDDEN");
    expect(err.message).toContain('minimal keys "p/"');
    const drainPages = async () => {
      for await (const _ of failing.keys({ prefix: "p/" }).byPage()) break;
    };
    expect((await expectStowageError(drainPages(), "FORBIDDEN")).message).toContain('minimal keys "p/"');
  });

  it("hands out a driver's batches as pages: as they are, cut to the page size, never empty", async () => {
    const batches = [["a", "b", "c"], [], ["d", "e", "f", "g", "h"]];
    const pageSizes: number[] = [];
    let closed = 0;
    const store = defineObjectStore(
      minimalDriver({
        async *keys({ pageSize }) {
          pageSizes.push(pageSize);
          try {
            yield* batches;
          } finally {
            closed++;
          }
        },
      }),
    );
    const pages: (readonly string[])[] = [];
    for await (const page of store.keys().byPage()) pages.push(page);
    // The driver's own arrays, not copies: a page costs no copy of its keys.
    expect(pages).toEqual([
      ["a", "b", "c"],
      ["d", "e", "f", "g", "h"],
    ]);
    expect(pages[0]).toBe(batches[0]);
    expect(pageSizes).toEqual([1000]);

    pages.length = 0;
    for await (const page of store.keys({ pageSize: 2 }).byPage()) pages.push(page);
    expect(pages).toEqual([["a", "b"], ["c"], ["d", "e"], ["f", "g"], ["h"]]);
    expect(pageSizes).toEqual([1000, 2]);

    for await (const _ of store.keys().byPage()) break;
    expect(closed).toBe(3);

    // Each `byPage()` and each `for await` is a walk of its own.
    const listing = store.keys();
    const first: string[] = [];
    for await (const page of listing.byPage()) first.push(...page);
    const second: string[] = [];
    for await (const key of listing) second.push(key);
    expect(second).toEqual(first);
    expect(closed).toBe(5);
  });

  it("stops a walk by pages when the signal fires while the caller holds a page", async () => {
    const { store, log } = batchedKeys(2);
    for (const key of ["a", "b", "c", "d", "e"]) await store.put(key, new Uint8Array([1]));
    const controller = new AbortController();
    const seen: (readonly string[])[] = [];
    const aborted = async () => {
      for await (const page of store.keys({ signal: controller.signal }).byPage()) {
        seen.push(page);
        controller.abort(new Error("stop"));
      }
    };
    await expectStowageError(aborted(), "ABORTED");
    expect(seen).toEqual([["a", "b"]]);
    expect(log.closed).toBe(1);
  });

  it("gathers `iterate`'s keys into pages where the driver has no `keys`", async () => {
    const store = defineObjectStore(minimalDriver());
    for (const key of ["a", "b", "c", "d", "e"]) await store.put(key, new Uint8Array([1]));
    const pages: (readonly string[])[] = [];
    for await (const page of store.keys({ pageSize: 2 }).byPage()) pages.push(page);
    expect(pages).toEqual([["a", "b"], ["c", "d"], ["e"]]);

    const controller = new AbortController();
    const seen: string[] = [];
    const aborted = async () => {
      for await (const key of store.keys({ signal: controller.signal, pageSize: 3 })) {
        seen.push(key);
        if (key === "a") controller.abort(new Error("stop"));
      }
    };
    await expectStowageError(aborted(), "ABORTED");
    expect(seen).toEqual(["a"]);
  });

  it("declares native features only when the driver has them", () => {
    const plain = defineObjectStore(minimalDriver());
    expect(plain.capabilities).toMatchObject({ nativeMove: false, nativeTouch: false, directUpload: false });
    expect(createMemoryObjectStore().capabilities).toMatchObject({ nativeMove: true, nativeTouch: true });
  });

  it("fails instead of looping when a driver's cursor does not advance", async () => {
    const store = defineObjectStore(
      minimalDriver({
        list: async () => ({ items: [{ key: "a", size: 1, lastModified: new Date() }], cursor: "stuck" }),
      }),
    );
    const seen: string[] = [];
    const drain = async () => {
      for await (const item of store.iterate()) seen.push(item.key);
    };
    await expect(drain()).rejects.toSatisfy((err) => StowageError.is(err, "INTERNAL"));
    expect(seen).toEqual(["a", "a"]);
  });

  it("maps a driver's raw system error to a StowageError naming the operation", async () => {
    const store = defineObjectStore(
      minimalDriver({
        get: async () => {
          throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
        },
      }),
    );
    const err = await store.get("secret").catch((error: unknown) => error);
    expect(StowageError.is(err, "FORBIDDEN")).toBe(true);
    expect((err as Error).message).toContain('minimal get "secret"');
  });

  it("validates direct upload requests before the driver signs anything", async () => {
    const signed: string[] = [];
    const store = defineObjectStore(
      minimalDriver({
        createUploadUrl: async (request) => {
          signed.push(request.key);
          return { method: "PUT", url: "https://example.test/x", headers: {}, expiresAt: new Date() };
        },
      }),
    );
    expect(store.capabilities.directUpload).toBe(true);
    const good = { key: "a/b.png", contentType: "image/png", contentLength: 10, expiresInSeconds: 900 };
    await store.createUploadUrl!(good);
    const bad = [
      { ...good, key: "../x" },
      { ...good, contentType: "" },
      { ...good, contentLength: -1 },
      { ...good, contentLength: 1.5 },
      { ...good, sha256: "XYZ" },
      { ...good, expiresInSeconds: 0 },
      { ...good, expiresInSeconds: 8 * 24 * 3600 },
    ];
    for (const request of bad) {
      await expect(store.createUploadUrl!(request)).rejects.toSatisfy((err) =>
        StowageError.is(err, "INVALID_INPUT"),
      );
    }
    expect(signed).toEqual(["a/b.png"]);
  });

  it("validates direct download requests: disposition and file name", async () => {
    const asked: unknown[] = [];
    const store = defineObjectStore(
      minimalDriver({
        createDownloadUrl: async (request) => {
          asked.push(request);
          return { method: "GET", url: "https://example.test/x", headers: {}, expiresAt: new Date() };
        },
      }),
    );
    const good = {
      key: "a/b.png",
      expiresInSeconds: 60,
      disposition: "attachment" as const,
      filename: "b é.png",
    };
    await store.createDownloadUrl!(good);
    for (const request of [
      { ...good, disposition: "download" },
      { ...good, filename: "../b.png" },
      { ...good, filename: "a/b.png" },
      { ...good, filename: "b\u0000.png" },
      { ...good, filename: "" },
    ]) {
      await expectStowageError(store.createDownloadUrl!(request as never), "INVALID_INPUT");
    }
    expect(asked).toEqual([good]);
  });

  it("maps every driver error through mapError, streams broken off mid-body included", async () => {
    const raw = Object.assign(new Error("backend said no"), { name: "AccessDenied" });
    const contexts: string[] = [];
    const mapError = (err: unknown, context: string) => {
      contexts.push(context);
      return new StowageError("FORBIDDEN", `${context}: mapped`, { cause: err });
    };
    const store = defineObjectStore(
      minimalDriver({
        mapError,
        head: async () => {
          throw raw;
        },
        stream: async () =>
          new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(new Uint8Array([1, 2, 3]));
            },
            pull(controller) {
              controller.error(raw);
            },
          }),
      }),
    );
    const headError = await expectStowageError(store.head("k"), "FORBIDDEN");
    expect(headError.cause).toBe(raw);
    const stream = (await store.stream("k"))!;
    const reader = stream.getReader();
    expect((await reader.read()).value).toEqual(new Uint8Array([1, 2, 3]));
    await expectStowageError(reader.read(), "FORBIDDEN");
    expect(contexts).toEqual(['minimal head "k"', 'minimal stream "k"']);
  });

  it("passes StowageErrors through without calling mapError", async () => {
    let called = false;
    const store = defineObjectStore(
      minimalDriver({
        mapError: (err) => {
          called = true;
          return err as StowageError;
        },
        get: async () => {
          throw new StowageError("CONFLICT", "already a StowageError");
        },
      }),
    );
    await expectStowageError(store.get("k"), "CONFLICT");
    expect(called).toBe(false);
  });

  it("offers uriFor only where the driver has one, with the key validated first", async () => {
    expect(defineObjectStore(minimalDriver()).uriFor).toBeUndefined();
    const store = defineObjectStore(minimalDriver({ uriFor: (key) => `mem://bucket/${key}` }));
    expect(store.uriFor!("a/b.txt")).toBe("mem://bucket/a/b.txt");
    await expectStowageError(() => store.uriFor!("../etc/passwd"), "INVALID_INPUT");
  });
});
