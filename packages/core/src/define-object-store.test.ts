import { describe, expect, it } from "vitest";
import { defineObjectStore, type ObjectStoreDriver } from "./define-object-store.js";
import { StowageError } from "./errors.js";
import { createMemoryObjectStore } from "./memory-object-store.js";
import { describeObjectStoreConformance } from "./testing/object-store-conformance.js";

/** A driver with only the required methods, delegating to a memory store. */
function minimalDriver(overrides: Partial<ObjectStoreDriver> = {}): ObjectStoreDriver {
  const backing = createMemoryObjectStore();
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

describe("defineObjectStore", () => {
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
});
