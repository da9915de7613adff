import { createHash, randomUUID } from "node:crypto";
import { join } from "node:path";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import {
  realTranscripts,
  realTranscriptsWithImages,
  s3ClientOptions,
  s3TestEnv,
  screenshotPng,
  tempDirectory,
} from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { createObjectSessionStore } from "../../src/session-store/object-session-store.js";
import type { CompleteSessionStore, SessionStoreEntry } from "../../src/session-store/types.js";
import { describeSessionStoreConformance } from "../../src/testing/session-store-conformance.js";

// The SDK reads CLAUDE_CONFIG_DIR once per process; vitest runs this file in its own fork.
const claudeConfigDir = join(await tempDirectory("stowage-session-store-payloads-sdk-"), ".claude");
process.env.CLAUDE_CONFIG_DIR = claudeConfigDir;

const png = screenshotPng(7, 320, 200);
const base64 = png.toString("base64");
const sha256 = createHash("sha256").update(png).digest("hex");
const key = { projectKey: "-workspace-app", sessionId: "s1" };
/** Claude Code's line for a `Read` of a PNG: the image twice (its result's block, `toolUseResult.file.base64`). */
const readOfPng = (uuid: string): SessionStoreEntry => ({
  type: "user",
  uuid,
  message: {
    role: "user",
    content: [
      {
        tool_use_id: "toolu_1",
        type: "tool_result",
        content: [{ type: "image", source: { type: "base64", data: base64, media_type: "image/png" } }],
      },
    ],
  },
  toolUseResult: { type: "image", file: { base64, type: "image/png", originalSize: png.byteLength } },
});

const partsDir = "session-store/-workspace-app/s1/";
/** A part's name as the README gives it: 12-digit first and last sequence numbers. */
const partName = (first: number, last = first) =>
  `part-${String(first).padStart(12, "0")}-${String(last).padStart(12, "0")}.jsonl`;

async function textOf(objects: ObjectStore, prefix: string): Promise<string> {
  let text = "";
  for await (const item of objects.iterate({ prefix }))
    text += Buffer.from((await objects.get(item.key))!).toString("utf8");
  return text;
}

describeSessionStoreConformance({
  name: "object SessionStore on memory, images in a blob store",
  claudeConfigDir,
  createStore: () => {
    const objects = createMemoryObjectStore();
    return createObjectSessionStore({
      store: objects,
      blobs: createBlobStore({ store: objects, prefix: "blobs/" }),
      compactAfterParts: 2,
    });
  },
});

describeSessionStoreConformance({
  name: "object SessionStore on fs, images in a blob store",
  claudeConfigDir,
  createStore: async () => {
    const objects = createFsObjectStore({ root: await tempDirectory("stowage-session-store-payloads-") });
    return createObjectSessionStore({
      store: objects,
      blobs: createBlobStore({ store: objects, prefix: "blobs/" }),
    });
  },
});

const s3 = s3TestEnv("object SessionStore with a blob store");
const s3Objects = new WeakMap<object, ObjectStore>();
const s3ObjectsFor = (prefix: string) =>
  createS3ObjectStore({
    client: createS3Client(s3ClientOptions(s3)),
    bucket: s3.values.S3_BUCKET!,
    prefix,
  });
describeSessionStoreConformance({
  name: "object SessionStore on S3 (Ceph RGW), images in a blob store",
  claudeConfigDir,
  ...(s3.ready ? {} : { skip: s3.reason }),
  createStore: () => {
    const objects = s3ObjectsFor(`test/session-store-payloads/${randomUUID()}/`);
    const store = createObjectSessionStore({
      store: objects,
      blobs: createBlobStore({ store: objects, prefix: "blobs/" }),
      compactAfterParts: 3,
    });
    s3Objects.set(store, objects);
    return store;
  },
  // RGW keeps every object in memory: each test empties its own prefix.
  destroyStore: async (store) => {
    const objects = s3Objects.get(store)!;
    const keys: string[] = [];
    for await (const item of objects.iterate()) keys.push(item.key);
    for (const objectKey of keys) await objects.delete(objectKey);
  },
});

describe("object SessionStore given a blob store", () => {
  it("an image's bytes are held once, after the lines of the part that first refers to it (format 4); later parts refer to it", async () => {
    const objects = createMemoryObjectStore();
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    const store = createObjectSessionStore({ store: objects, blobs });
    await store.append(key, [
      { type: "user", uuid: "prompt", message: { content: "look" } },
      readOfPng("read"),
    ]);
    await store.append(key, [readOfPng("again")]);
    const first = Buffer.from((await objects.get(`${partsDir}${partName(1)}`))!);
    const second = Buffer.from((await objects.get(`${partsDir}${partName(2)}`))!);
    // Part 1: header, two lines, then the PNG's bytes as they are (no base64 anywhere).
    const [header, , line] = first.toString("latin1").split("\n");
    expect(JSON.parse(header!)).toMatchObject({
      stowageSessionPart: 4,
      moved: {
        1: [
          { path: ["message", "content", 0, "content", 0, "source", "data"], sha256, form: "" },
          { path: ["toolUseResult", "file", "base64"], sha256, form: "" },
        ],
      },
      held: [{ sha256, size: png.byteLength }],
    });
    expect(JSON.parse(line!).toolUseResult.file.base64).toBe(`blob:sha256:${sha256}`);
    expect(first.subarray(first.byteLength - png.byteLength)).toEqual(png);
    expect(first.toString("latin1")).not.toContain(base64.slice(0, 200));
    // Part 2 refers to the bytes part 1 holds: format 3, text alone.
    expect(JSON.parse(second.toString("utf8").split("\n")[0]!)).toMatchObject({ stowageSessionPart: 3 });
    expect(second.byteLength).toBeLessThan(2_000);
    expect((await blobs.list()).items).toEqual([]);
    const sent = [
      { type: "user", uuid: "prompt", message: { content: "look" } },
      readOfPng("read"),
      readOfPng("again"),
    ];
    expect(await store.load(key)).toEqual(sent);
    // A store in another process, given no blob store, reads what the parts hold.
    expect(await createObjectSessionStore({ store: objects }).load(key)).toEqual(sent);
  });

  it("compaction moves the bytes parts hold into the blob store: the range holds refs only", async () => {
    const objects = createMemoryObjectStore();
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    const store = createObjectSessionStore({ store: objects, blobs });
    await store.append(key, [readOfPng("read")]);
    await store.append(key, [readOfPng("again")]);
    await store.compact(key);
    const range = Buffer.from((await objects.get(`${partsDir}${partName(1, 2)}`))!).toString("utf8");
    expect(JSON.parse(range.split("\n")[0]!)).toMatchObject({ stowageSessionPart: 3 });
    expect(range).not.toContain(base64.slice(0, 200));
    expect((await blobs.list()).items.map((item) => item.hash)).toEqual([sha256]);
    expect(Buffer.from((await blobs.get(sha256))!).equals(png)).toBe(true);
    expect(await store.load(key)).toEqual([readOfPng("read"), readOfPng("again")]);
    // Now a store given no blob store cannot put them back: it says so rather than return refs.
    await expectStowageError(
      createObjectSessionStore({ store: objects }).load(key),
      "UNAVAILABLE",
      "NO_BLOB_STORE",
    );
  });

  it("a store in another process appending the same image refers to the bytes the first one's part holds", async () => {
    const objects = createMemoryObjectStore();
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    await createObjectSessionStore({ store: objects, blobs }).append(key, [readOfPng("a")]);
    const other = createObjectSessionStore({ store: objects, blobs });
    await other.append(key, [readOfPng("b")]);
    const second = Buffer.from((await objects.get(`${partsDir}${partName(2)}`))!).toString("utf8");
    expect(JSON.parse(second.split("\n")[0]!)).toMatchObject({ stowageSessionPart: 3 });
    expect(await other.load(key)).toEqual([readOfPng("a"), readOfPng("b")]);
  });

  it("a blob that is missing when the transcript is loaded is INTEGRITY / MISSING_BLOB naming its ref", async () => {
    const objects = createMemoryObjectStore();
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    const store = createObjectSessionStore({ store: objects, blobs });
    await store.append(key, [readOfPng("read")]);
    await store.append(key, [{ type: "user", uuid: "after" }]);
    await store.compact(key);
    await objects.delete(blobs.keyFor(sha256));
    const err = await expectStowageError(store.load(key), "INTEGRITY", "MISSING_BLOB");
    expect(err.details).toMatchObject({ ref: `blob:sha256:${sha256}`, key: "-workspace-app/s1" });
  });

  it("an append racing a delete in another process: a ref to bytes the deleted parts held is INTEGRITY / MISSING_BLOB, never a broken image", async () => {
    const objects = createMemoryObjectStore();
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    const writer = createObjectSessionStore({ store: objects, blobs });
    await writer.append(key, [readOfPng("read")]);
    await createObjectSessionStore({ store: objects, blobs }).delete(key, { trashDays: 0 });
    // The writer still remembers part 1 holding the image; its next part refers to it.
    await writer.append(key, [readOfPng("again")]);
    const err = await expectStowageError(writer.load(key), "INTEGRITY", "MISSING_BLOB");
    expect(err.details).toMatchObject({ ref: `blob:sha256:${sha256}` });
  });

  it("bytes that changed are INTEGRITY, never an image that is not the one appended: held in a part, or in the blob store", async () => {
    const objects = createMemoryObjectStore();
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    const store = createObjectSessionStore({ store: objects, blobs });
    await store.append(key, [readOfPng("read")]);
    const partKey = `${partsDir}${partName(1)}`;
    const stored = new Uint8Array((await objects.get(partKey))!);
    const flipped = new Uint8Array(stored);
    flipped[flipped.byteLength - 100] = flipped[flipped.byteLength - 100]! ^ 1;
    await objects.put(partKey, flipped);
    const err = await expectStowageError(store.load(key), "INTEGRITY", "CORRUPT_PART");
    expect(err.details).toEqual({ key: partKey, offset: stored.byteLength - png.byteLength });
    await objects.put(partKey, stored);
    await store.append(key, [{ type: "user", uuid: "after" }]);
    await store.compact(key);
    const corrupt = new Uint8Array(png);
    corrupt[100] = corrupt[100]! ^ 1;
    await objects.put(blobs.keyFor(sha256), corrupt);
    await expectStowageError(store.load(key), "INTEGRITY");
  });

  it("externalizePayloads: false keeps payloads in the parts; a store given the blob store still reads what was moved before", async () => {
    const objects = createMemoryObjectStore();
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    const inline = createObjectSessionStore({ store: objects, blobs, externalizePayloads: false });
    await inline.append(key, [readOfPng("inline")]);
    expect(await textOf(objects, "session-store/")).toContain(base64);
    expect((await blobs.list()).items).toEqual([]);
    await createObjectSessionStore({ store: objects, blobs }).append(key, [readOfPng("moved")]);
    expect(await inline.load(key)).toEqual([readOfPng("inline"), readOfPng("moved")]);
  });

  it("compacting parts that hold moved payloads keeps them, from this process's lines and from what another wrote", async () => {
    const objects = createMemoryObjectStore();
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    const a = createObjectSessionStore({ store: objects, blobs, compactAfterParts: 3 });
    const b = createObjectSessionStore({ store: objects, blobs });
    const sent: SessionStoreEntry[] = [];
    for (let i = 0; i < 7; i++) {
      const batch = [{ type: "user", uuid: `text-${i}` }, readOfPng(`read-${i}`)];
      sent.push(...batch);
      await (i % 2 ? b : a).append(key, batch);
    }
    await b.compact(key);
    expect(await a.load(key)).toEqual(sent);
    expect(await textOf(objects, "session-store/")).not.toContain(base64.slice(0, 200));
  });

  it("refuses options that are not a blob store or not a boolean", () => {
    const store = createMemoryObjectStore();
    for (const options of [
      { store, blobs: {} },
      { store, blobs: "blobs/" },
      { store, blobs: createBlobStore({ store }), externalizePayloads: "yes" },
      { store, externalizePayloads: true },
    ]) {
      expect(() => createObjectSessionStore(options as never)).toThrow(
        expect.objectContaining({ code: "INVALID_INPUT" }),
      );
    }
  });
});

const real = realTranscripts("object SessionStore real transcripts");

/** Appends every record in batches of 50, as the SDK mirrors a transcript, and loads it back. */
async function roundTrip(store: CompleteSessionStore, records: SessionStoreEntry[], sessionId: string) {
  const at = { projectKey: "real", sessionId };
  for (let start = 0; start < records.length; start += 50)
    await store.append(at, records.slice(start, start + 50));
  return store.load(at);
}

describe.skipIf(!real.present)("real transcripts through the object SessionStore with a blob store", () => {
  const stores: [string, () => Promise<{ store: CompleteSessionStore; objects: ObjectStore }>][] = [
    [
      "memory",
      async () => {
        const objects = createMemoryObjectStore();
        return {
          objects,
          store: createObjectSessionStore({
            store: objects,
            blobs: createBlobStore({ store: objects, prefix: "blobs/" }),
            compactAfterParts: 4,
          }),
        };
      },
    ],
    [
      "fs",
      async () => {
        const objects = createFsObjectStore({
          root: await tempDirectory("stowage-real-payloads-"),
          fsync: false,
        });
        return {
          objects,
          store: createObjectSessionStore({
            store: objects,
            blobs: createBlobStore({ store: objects, prefix: "blobs/" }),
          }),
        };
      },
    ],
  ];

  if (s3.ready) {
    stores.push([
      "S3 (Ceph RGW)",
      async () => {
        const objects = s3ObjectsFor(`test/session-store-real/${randomUUID()}/`);
        const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
        return { objects, store: createObjectSessionStore({ store: objects, blobs }) };
      },
    ]);
  }

  it.each(stores)(
    "on %s: every real line comes back byte for byte, as written and with real images in it",
    async (_name, open) => {
      const { store, objects } = await open();
      // RGW keeps every object in memory: the test empties what it wrote.
      onTestFinished(async () => {
        const keys: string[] = [];
        for await (const item of objects.iterate()) keys.push(item.key);
        for (const objectKey of keys) await objects.delete(objectKey);
      });
      let id = 0;
      for (const file of real.files()) {
        const records = real.records(file) as SessionStoreEntry[];
        // JSON.stringify of what was read from the file, computed before anything is stored.
        const expected = JSON.stringify(records);
        expect(JSON.stringify(await roundTrip(store, records, `plain-${id++}`))).toBe(expected);
      }
      const withImages = realTranscriptsWithImages(real);
      let images = 0;
      for (const { records } of withImages) {
        const expected = JSON.stringify(records);
        images += (expected.match(/iVBORw0KGgo/g) ?? []).length;
        expect(JSON.stringify(await roundTrip(store, records as SessionStoreEntry[], `images-${id++}`))).toBe(
          expected,
        );
      }
      expect(images).toBeGreaterThan(20);
      // The images are in the blob store, not in the parts.
      expect(await textOf(objects, "session-store/")).not.toContain("iVBORw0KGgo");
    },
  );
});
