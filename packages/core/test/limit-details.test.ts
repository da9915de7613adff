// Limits are not exported: the README gives each, and the error that enforces one says it in
// `details.limit`, so that a caller learns it from the refusal.
import { describe, expect, it } from "vitest";
import { assertContentType } from "../src/content-type.js";
import { defineObjectStore } from "../src/define-object-store.js";
import { assertSafeKey, assertSafeKeyPrefix } from "../src/keys.js";
import { createMemoryObjectStore } from "../src/memory-object-store.js";
import { createMemoryNotifier } from "../src/notifier.js";
import { assertSafeId } from "../src/safe-id.js";
import { assertSessionId } from "../src/session-id.js";
import { expectStowageError } from "../src/testing/expect-stowage-error.js";

const store = createMemoryObjectStore();
const signing = defineObjectStore({
  name: "signing",
  atomicCreateOnly: true,
  keepsContentType: true,
  put: (key, body, options) => store.put(key, body, options),
  get: (key) => store.get(key),
  stream: (key) => store.stream(key),
  head: (key) => store.head(key),
  delete: (key) => store.delete(key),
  list: (options) => store.list(options),
  createUploadUrl: async () => ({
    method: "PUT",
    url: "https://x.invalid/",
    headers: {},
    expiresAt: new Date(),
  }),
  createDownloadUrl: async () => ({
    method: "GET",
    url: "https://x.invalid/",
    headers: {},
    expiresAt: new Date(),
  }),
});
const notifier = createMemoryNotifier();
const longKey = Array.from({ length: 5 }, () => "k".repeat(250)).join("/");
const week = 7 * 24 * 3600;

describe("an error that enforces a limit says it in details.limit", () => {
  it.each([
    ["a list limit over 1,000", () => store.list({ limit: 1001 }), 1000],
    [
      "an iterate pageSize over 1,000",
      () => store.iterate({ pageSize: 1001 })[Symbol.asyncIterator]().next(),
      1000,
    ],
    ["a cursor over 4,096 characters", () => store.list({ cursor: "c".repeat(4097) }), 4096],
    ["a key over 1,024 bytes", () => assertSafeKey(longKey), 1024],
    ["a key segment over 255 bytes", () => assertSafeKey(`a/${"s".repeat(256)}`), 255],
    ["a prefix over 1,024 bytes", () => assertSafeKeyPrefix(`${longKey}/`), 1024],
    ["a put of a key over 1,024 bytes", () => store.put(longKey, new Uint8Array(1)), 1024],
    ["a content type over 255 characters", () => assertContentType(`a/${"b".repeat(254)}`), 255],
    [
      "a put with a content type over 255 characters",
      () => store.put("k", new Uint8Array(1), { contentType: `a/${"b".repeat(254)}` }),
      255,
    ],
    [
      "an upload URL living over 7 days",
      () =>
        signing.createUploadUrl!({
          key: "k",
          contentType: "image/png",
          contentLength: 1,
          expiresInSeconds: week + 1,
        }),
      week,
    ],
    [
      "a download URL living over 7 days",
      () => signing.createDownloadUrl!({ key: "k", expiresInSeconds: week + 1 }),
      week,
    ],
    ["a safe id over 128 characters", () => assertSafeId("x".repeat(129), "jobId"), 128],
    ["a safe id over the caller's own cap", () => assertSafeId("x".repeat(65), "alias", 64), 64],
    ["a session id over 128 characters", () => assertSessionId("s".repeat(129)), 128],
    ["a notifier topic over 512 characters", () => notifier.publish("t".repeat(513), "m"), 512],
    ["a notifier message over 4,000 bytes", () => notifier.publish("t", "é".repeat(2001)), 4000],
  ] as const)("%s", async (_why, action, limit) => {
    const err = await expectStowageError(action, "INVALID_INPUT");
    expect(err.details?.limit).toBe(limit);
  });

  it("a refusal for another reason does not claim a limit", async () => {
    for (const action of [
      () => assertSafeKey("a/../b"),
      () => assertSafeId("../x", "jobId"),
      () => assertSessionId("x.jsonl"),
      () => assertContentType("json"),
      () => store.list({ limit: 0 }),
      () => notifier.publish("a\u0000b", "m"),
    ]) {
      const err = await expectStowageError(action, "INVALID_INPUT");
      expect(err.details?.limit).toBeUndefined();
    }
  });
});
