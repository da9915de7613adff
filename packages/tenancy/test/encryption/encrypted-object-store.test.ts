import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { describeObjectStoreConformance, expectStowageError } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { keysThroughWrapper, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createDataKeys } from "../../src/encryption/data-keys.js";
import { createEncryptedObjectStore } from "../../src/encryption/encrypted-object-store.js";
import { envKeyProvider } from "../../src/encryption/env-key-provider.js";

const base = await tempDirectory("stowage-encrypted-");
const KEK = randomBytes(32).toString("base64");
const OTHER_KEK = randomBytes(32).toString("base64");
const SEGMENT = 64 * 1024;
// Header: "STWE", version, 16-byte data key id, 16-byte salt; each segment ends in a 16-byte tag.
const HEADER = 4 + 1 + 16 + 16;
const TAG = 16;

function sealed(raw: ObjectStore, keyStore: ObjectStore = createMemoryObjectStore(), kek = KEK) {
  const keys = createDataKeys(keyStore, "encryption-keys/", envKeyProvider({ STOWAGE_ENCRYPTION_KEY: kek })!);
  return createEncryptedObjectStore(raw, keys);
}

// The ObjectStore contract holds through the seal, on memory and on the file system.
describeObjectStoreConformance({
  name: "encrypted memory object store",
  createStore: () => sealed(createMemoryObjectStore()),
});
describeObjectStoreConformance({
  name: "encrypted fs object store",
  createStore: (namespace) => sealed(createFsObjectStore({ root: join(base, namespace) })),
  destroyStore: (_store, namespace) => rm(join(base, namespace), { recursive: true, force: true }),
});

const SECRET = "AKIAIOSFODNN7EXAMPLE aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

describe("sealed objects at rest", () => {
  it("are listed by name through the inner store's names-only listing, not a read of every item", async () => {
    expect(await keysThroughWrapper((inner) => sealed(inner))).toEqual({
      calls: ["keys", "keys"],
      keys: ["a/1", "a/2"],
      pages: [["a/1", "a/2"], ["b/1"]],
    });
  });

  it("hold no plaintext, have the size the format says, and come back whole", async () => {
    const raw = createMemoryObjectStore();
    const store = sealed(raw);
    const body = Buffer.from(SECRET.repeat(3000)); // 243,000 bytes: 4 segments, the last partial
    await store.put("threads/user/alice/full/job/a/item", body);
    const stored = (await raw.get("threads/user/alice/full/job/a/item"))!;
    expect(Buffer.from(stored).includes(Buffer.from("AKIAIOSFODNN7EXAMPLE"))).toBe(false);
    expect(stored.byteLength).toBe(HEADER + body.byteLength + 4 * TAG);
    expect(Buffer.from(stored.subarray(0, 5))).toEqual(Buffer.from([0x53, 0x54, 0x57, 0x45, 1]));
    expect((await store.head("threads/user/alice/full/job/a/item"))?.size).toBe(body.byteLength);
    expect(Buffer.from((await store.get("threads/user/alice/full/job/a/item"))!)).toEqual(body);
  });

  it("are opened over the bytes the inner store read, whole at every size around a segment's", async () => {
    const raw = createMemoryObjectStore();
    let read: Uint8Array | null = null;
    const spied: ObjectStore = {
      ...raw,
      get: async (objectKey, options) => (read = await raw.get(objectKey, options)),
    };
    const store = sealed(spied);
    const sizes = [0, 1, SEGMENT - 1, SEGMENT, SEGMENT + 1, 2 * SEGMENT, 3 * SEGMENT + 10];
    for (const size of sizes) {
      const body = new Uint8Array(randomBytes(size));
      await store.put(`sized/${size}`, body);
      const opened = (await store.get(`sized/${size}`))!;
      expect(Buffer.from(opened).equals(body), `${size} bytes`).toBe(true);
      // A view of the read buffer, not a copy: no second buffer of the object's size.
      expect(opened.buffer, `${size} bytes`).toBe(read!.buffer);
      expect(opened.byteOffset).toBe(read!.byteOffset);
    }
  });

  it("seal two puts of the same bytes differently (a fresh salt per object)", async () => {
    const raw = createMemoryObjectStore();
    const store = sealed(raw);
    await store.put("a", Buffer.from(SECRET));
    await store.put("b", Buffer.from(SECRET));
    expect(Buffer.from((await raw.get("a"))!).equals(Buffer.from((await raw.get("b"))!))).toBe(false);
  });
});

/** A store holding one sealed object of `segments` full segments plus 10 bytes, and its raw bytes. */
async function oneObject(segments = 2) {
  const raw = createMemoryObjectStore();
  const keyStore = createMemoryObjectStore();
  const store = sealed(raw, keyStore);
  const body = new Uint8Array(randomBytes(segments * SEGMENT + 10));
  await store.put("hot-state/user/alice/s1/v1", body);
  return { raw, keyStore, store, body, bytes: Buffer.from((await raw.get("hot-state/user/alice/s1/v1"))!) };
}

const key = "hot-state/user/alice/s1/v1";

function patch(bytes: Buffer, at: number, value: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[at] = value;
  return copy;
}
const flip = (bytes: Buffer, at: number) => patch(bytes, at, bytes[at]! ^ 0x01);

function swapSegments(bytes: Buffer): Buffer {
  const first = bytes.subarray(HEADER, HEADER + SEGMENT + TAG);
  const second = bytes.subarray(HEADER + SEGMENT + TAG, HEADER + 2 * (SEGMENT + TAG));
  return Buffer.concat([
    bytes.subarray(0, HEADER),
    second,
    first,
    bytes.subarray(HEADER + 2 * (SEGMENT + TAG)),
  ]);
}

async function expectRejected(store: ObjectStore, code: "INTEGRITY" | "FORBIDDEN", objectKey = key) {
  await expectStowageError(store.get(objectKey), code);
  const stream = await store.stream(objectKey).catch((err: unknown) => err);
  if (stream instanceof ReadableStream) await expectStowageError(new Response(stream).arrayBuffer(), code);
  else await expectStowageError(Promise.reject(stream), code);
}

describe("tampering is INTEGRITY, never garbage", () => {
  const cases: [string, (bytes: Buffer) => Buffer][] = [
    ["a bit flipped in the first segment", (b) => flip(b, HEADER + 5)],
    ["a bit flipped in the last segment's tag", (b) => flip(b, b.byteLength - 1)],
    ["a bit flipped in the salt", (b) => flip(b, 4 + 1 + 16 + 3)],
    [
      "the last segment cut off (a whole-segment truncation)",
      (b) => b.subarray(0, HEADER + 2 * (SEGMENT + TAG)),
    ],
    ["one byte cut off", (b) => b.subarray(0, b.byteLength - 1)],
    ["cut inside the header", (b) => b.subarray(0, 20)],
    ["empty", () => Buffer.alloc(0)],
    ["the first two segments swapped", (b) => swapSegments(b)],
    ["a version this build does not read", (b) => patch(b, 4, 2)],
    ["bytes stored in clear", () => Buffer.from(SECRET)],
  ];
  for (const [what, tamper] of cases) {
    it(what, async () => {
      const { raw, store, bytes } = await oneObject();
      await raw.put(key, tamper(Buffer.from(bytes)));
      await expectRejected(store, "INTEGRITY");
    });
  }

  it("another object of the same principal put at this key (object swap)", async () => {
    const { raw, store } = await oneObject();
    await store.put("hot-state/user/alice/s1/v2", Buffer.from("the other version"));
    await raw.put(key, (await raw.get("hot-state/user/alice/s1/v2"))!);
    await expectRejected(store, "INTEGRITY");
  });

  it("another principal's object put at this key is FORBIDDEN (its data key is not alice's)", async () => {
    const { raw, store } = await oneObject();
    await store.put("hot-state/user/bob/s1/v1", Buffer.from("bob's"));
    await raw.put(key, (await raw.get("hot-state/user/bob/s1/v1"))!);
    await expectRejected(store, "FORBIDDEN");
  });
});

describe("keys", () => {
  it("a missing key-encryption key is FORBIDDEN, a different key under the same id INTEGRITY", async () => {
    const { raw, keyStore } = await oneObject();
    await expectRejected(sealed(raw, keyStore, OTHER_KEK), "FORBIDDEN");
    await expectRejected(sealed(raw, keyStore, `k1:${OTHER_KEK}`), "FORBIDDEN");
    const { raw: raw2, keyStore: keyStore2 } = await oneObject();
    const named = sealed(raw2, keyStore2, `k1:${KEK}`);
    await named.put("x", Buffer.from("named"));
    await expectRejected(sealed(raw2, keyStore2, `k1:${OTHER_KEK}`), "INTEGRITY", "x");
  });

  it("a deleted key record is FORBIDDEN", async () => {
    const { raw, keyStore } = await oneObject();
    for await (const item of keyStore.iterate()) await keyStore.delete(item.key);
    await expectRejected(sealed(raw, keyStore), "FORBIDDEN");
  });

  it("a key record copied to another principal's scope does not unwrap there", async () => {
    const raw = createMemoryObjectStore();
    const keyStore = createMemoryObjectStore();
    const store = sealed(raw, keyStore);
    await store.put("hot-state/user/alice/s1/v1", Buffer.from("alice's"));
    await store.put("hot-state/user/bob/s1/v1", Buffer.from("bob's"));
    const [aliceRecord] = (await keyStore.list({ prefix: "encryption-keys/user/alice/" })).items;
    const aliceKeyName = aliceRecord!.key.split("/").pop()!;
    await keyStore.put(`encryption-keys/user/bob/${aliceKeyName}`, (await keyStore.get(aliceRecord!.key))!);
    // Alice's ciphertext at bob's key now finds a record of its data key id in bob's scope.
    await raw.put("hot-state/user/bob/s1/v1", (await raw.get("hot-state/user/alice/s1/v1"))!);
    await expectRejected(sealed(raw, keyStore), "INTEGRITY", "hot-state/user/bob/s1/v1");
  });
});
