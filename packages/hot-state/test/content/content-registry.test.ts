import { createHash } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type BlobStore, createBlobStore } from "@stowage/blob-store";
import { type ContentStore, createMemoryObjectStore, type ObjectStore, StowageError } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { beforeEach, describe, expect, it } from "vitest";
import {
  type ContentRegistry,
  createContentRegistry,
  DEFAULT_MAX_CONTENT_BYTES,
} from "../../src/content/content-registry.js";
import { iterateContentRefIds } from "../../src/content/record-keys.js";
import { MAX_RECORD_BYTES } from "../../src/content/registry-reads.js";
import { ContentRecordSchema } from "../../src/schemas/schemas.js";
import { captureLogger } from "../capture-logger.js";
import { HOSTILE_CONTENT_IDS } from "../hostile-ids.js";

const base = await tempDirectory("stowage-hot-state-registry-");

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");
const encode = (text: string) => new TextEncoder().encode(text);
/** The key of a content's record: `<prefix><first 2 hex>/<sha256>.json` (the README's layout). */
const keyOf = (id: string, prefix = "") => `${prefix}${id.slice(0, 2)}/${id}.json`;
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
let counter = 0;

interface Opened {
  /** The content store the registry keeps its bytes in (a BlobStore, as a ContentStore). */
  blobs: BlobStore;
  records: ObjectStore;
  registry: ContentRegistry;
  logger: ReturnType<typeof captureLogger>;
  /** The `content_uri` a record of `id` must carry. */
  uriOf(id: string): string;
}

interface Backend {
  name: string;
  /** Fresh, empty stores and the `content_uri` a record of `id` must carry in them. */
  stores(): Pick<Opened, "blobs" | "records" | "uriOf">;
}

const BACKENDS: Backend[] = [
  {
    name: "memory stores",
    stores: () => ({
      blobs: createBlobStore({ store: createMemoryObjectStore() }),
      records: createMemoryObjectStore(),
      // The memory store has no address for its objects: the record points at the blob ref.
      uriOf: (id) => `blob:sha256:${id}`,
    }),
  },
  {
    name: "fs stores",
    stores() {
      const root = join(base, `fs-${counter++}`);
      const blobRoot = join(root, "blobs");
      return {
        blobs: createBlobStore({ store: createFsObjectStore({ root: blobRoot }), layout: "sharded" }),
        records: createFsObjectStore({ root: join(root, "records") }),
        uriOf: (id) => pathToFileURL(join(blobRoot, id.slice(0, 2), id)).href,
      };
    },
  },
];

function open(backend: Backend, options: { prefix?: string; maxBytes?: number } = {}): Opened {
  const stores = backend.stores();
  const logger = captureLogger();
  const registry = createContentRegistry({
    content: stores.blobs,
    records: stores.records,
    logger,
    ...options,
  });
  return { ...stores, logger, registry };
}

async function keysOf(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of store.iterate()) keys.push(item.key);
  return keys;
}

/** Every record of the registry, page by page. */
async function listAll(registry: ContentRegistry): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await registry.list({ limit: 2, ...(cursor === undefined ? {} : { cursor }) });
    ids.push(...page.items.map((record) => record.artifact_id));
    cursor = page.cursor;
  } while (cursor !== undefined);
  return ids;
}

async function blobHashes(blobs: BlobStore): Promise<string[]> {
  const hashes: string[] = [];
  for await (const item of blobs.iterate()) hashes.push(item.hash);
  return hashes;
}

describe.each(BACKENDS)("content registry over $name", (backend) => {
  let blobs: BlobStore;
  let records: ObjectStore;
  let registry: ContentRegistry;
  let logger: ReturnType<typeof captureLogger>;
  let uriOf: (id: string) => string;

  /** Overwrites the stored bytes of `id` behind the content store's back (bit rot, a bad disk). */
  const tamper = (id: string, bytes: Uint8Array) => blobs.objects.put(blobs.keyFor(id), bytes);

  beforeEach(() => {
    ({ blobs, records, registry, logger, uriOf } = open(backend));
  });

  describe("storing", () => {
    it("stores text under its SHA-256 with a complete record", async () => {
      const text = "# Notes\n\nhello 😀";
      const { record, created } = await registry.storeText(text, { summary: "notes", producer: "executor" });
      const id = sha256(encode(text));
      expect(created).toBe(true);
      expect(record).toEqual({
        artifact_id: id,
        type: "doc",
        content_uri: uriOf(id),
        content_hash: id,
        size_bytes: encode(text).byteLength,
        created_at: record.created_at,
        producer: "executor",
        summary: "notes",
        mime: "text/plain; charset=utf-8",
      });
      expect(ContentRecordSchema.parse(record)).toEqual(record);
      expect(Date.now() - Date.parse(record.created_at)).toBeLessThan(60_000);
      expect(await keysOf(records)).toEqual([`${id.slice(0, 2)}/${id}.json`]);
      expect(decode((await blobs.get(id))!)).toBe(text);
    });

    it("gives the same content the same id and keeps the first record", async () => {
      const first = await registry.storeText("same", { type: "log" });
      const second = await registry.storeText("same", { type: "code", summary: "other" });
      expect(second.created).toBe(false);
      expect(second.record).toEqual(first.record);
      expect((await registry.list()).items).toHaveLength(1);
    });

    it("stores bytes as data with no MIME type unless given", async () => {
      const bytes = new Uint8Array([0, 255, 1, 254]);
      const { record } = await registry.storeBytes(bytes);
      expect(record.type).toBe("data");
      expect(record.mime).toBeUndefined();
      const withMime = await registry.storeBytes(new Uint8Array([9]), { mime: "image/png", type: "result" });
      expect(withMime.record).toMatchObject({ mime: "image/png", type: "result" });
      expect((await registry.get(record.artifact_id))!.content).toEqual(bytes);
    });

    it("keeps its own copy: changing the caller's buffer later changes nothing", async () => {
      const bytes = encode("original");
      const { record } = await registry.storeBytes(bytes);
      bytes.fill(0);
      expect(decode((await registry.get(record.artifact_id))!.content)).toBe("original");
    });

    it("adds content the shared content store already holds (a session image) as a new entry", async () => {
      const bytes = encode("stored by someone else first");
      await blobs.put(bytes);
      const { record, created } = await registry.storeBytes(bytes, { type: "result" });
      expect(created).toBe(true);
      expect(record.artifact_id).toBe(sha256(bytes));
      expect(await blobHashes(blobs)).toEqual([sha256(bytes)]);
    });

    it("refuses content over the cap with TOO_LARGE and writes nothing", async () => {
      const small = open(backend, { maxBytes: 8 });
      expect((await small.registry.storeText("12345678")).created).toBe(true);
      await expectStowageError(small.registry.storeText("123456789"), "TOO_LARGE");
      await expectStowageError(small.registry.storeText("é".repeat(5)), "TOO_LARGE");
      await expectStowageError(small.registry.storeBytes(new Uint8Array(9)), "TOO_LARGE");
      expect(await keysOf(small.records)).toHaveLength(1);
      expect(await blobHashes(small.blobs)).toHaveLength(1);
      const err = await expectStowageError(
        registry.storeBytes(new Uint8Array(DEFAULT_MAX_CONTENT_BYTES + 1)),
        "TOO_LARGE",
      );
      expect(err.details).toEqual({ size: DEFAULT_MAX_CONTENT_BYTES + 1, limit: DEFAULT_MAX_CONTENT_BYTES });
    });

    it.each([
      [{ type: "image" }, "an unknown type"],
      [{ summary: "s".repeat(501) }, "a summary over 500 characters"],
      [{ mime: "text plain" }, "a malformed MIME type"],
      [{ mime: "text/plain; charset" }, "a MIME parameter without a value"],
      [{ producer: "root" }, "an unknown producer"],
      [{ summary: "a\u0000b" }, "NUL in the summary"],
      [{ colour: "red" }, "an unknown option"],
    ])("refuses option %j (%s) and writes nothing", async (options, _why) => {
      await expectStowageError(registry.storeText("x", options as never), "INVALID_INPUT");
      expect(await keysOf(records)).toEqual([]);
      expect(await blobHashes(blobs)).toEqual([]);
    });

    it("refuses text that UTF-8 cannot carry, and non-text", async () => {
      await expectStowageError(registry.storeText("bad\ud800"), "INVALID_INPUT");
      await expectStowageError(registry.storeText(42 as never), "INVALID_INPUT");
      await expectStowageError(registry.storeBytes("text" as never), "INVALID_INPUT");
      expect(await keysOf(records)).toEqual([]);
      expect(await blobHashes(blobs)).toEqual([]);
    });

    it("stops with ABORTED when the signal has fired", async () => {
      const controller = new AbortController();
      controller.abort();
      await expectStowageError(registry.storeText("x", { signal: controller.signal }), "ABORTED");
      await expectStowageError(registry.get(sha256("x"), { signal: controller.signal }), "ABORTED");
    });

    it("keeps one consistent entry when many writers store the same content at once", async () => {
      const results = await Promise.all(Array.from({ length: 12 }, () => registry.storeText("contended")));
      expect(results.filter((result) => result.created)).toHaveLength(1);
      const stored = await registry.get(results[0]!.record.artifact_id);
      for (const result of results) expect(result.record).toEqual(stored!.record);
      expect(await keysOf(records)).toHaveLength(1);
      expect(await blobHashes(blobs)).toHaveLength(1);
      expect(logger.lines).toEqual([]);
    });
  });

  describe("reading", () => {
    it("returns content and record, and null for an id never stored", async () => {
      const { record } = await registry.storeText("read me");
      const found = await registry.get(record.artifact_id);
      expect(decode(found!.content)).toBe("read me");
      expect(found!.record).toEqual(record);
      expect(await registry.getRecord(record.artifact_id)).toEqual(record);
      const absent = sha256("never stored");
      expect(await registry.get(absent)).toBeNull();
      expect(await registry.getRecord(absent)).toBeNull();
    });

    it("does not see content of the shared content store that it holds no record of", async () => {
      const { hash } = await blobs.put(encode("a session image, not a content ref"));
      expect(await registry.get(hash)).toBeNull();
      expect(await registry.getRecord(hash)).toBeNull();
      expect((await registry.list()).items).toEqual([]);
      expect(await keysOf(records)).toEqual([]);
    });

    it.each(HOSTILE_CONTENT_IDS)("refuses the id $why everywhere with INVALID_INPUT", async ({ value }) => {
      const id = value as string;
      await expectStowageError(registry.get(id), "INVALID_INPUT");
      await expectStowageError(registry.getRecord(id), "INVALID_INPUT");
      await expectStowageError(registry.delete(id), "INVALID_INPUT");
    });

    it("refuses corrupted content with INTEGRITY instead of returning it", async () => {
      const { record } = await registry.storeText("pristine");
      await tamper(record.artifact_id, encode("tampered"));
      await expectStowageError(registry.get(record.artifact_id), "INTEGRITY");
    });

    it("is repaired by the content store when the right bytes are stored again over a truncated copy", async () => {
      const { record } = await registry.storeText("complete content");
      await tamper(record.artifact_id, encode("comp"));
      await expectStowageError(registry.get(record.artifact_id), "INTEGRITY");
      expect((await registry.storeText("complete content")).created).toBe(false);
      expect(decode((await registry.get(record.artifact_id))!.content)).toBe("complete content");
    });
  });

  describe("rebuilding records", () => {
    const damage: [string, (id: string, size: number) => Uint8Array][] = [
      ["not UTF-8", () => new Uint8Array([0xff, 0xfe, 0x00])],
      ["not JSON", () => encode("{ half a record")],
      ["JSON of the wrong shape", () => encode(JSON.stringify({ hello: "world" }))],
      [
        "about other content",
        (_id, size) =>
          encode(
            JSON.stringify({
              artifact_id: sha256("other"),
              type: "doc",
              content_uri: "file:///x",
              content_hash: sha256("other"),
              size_bytes: size,
              created_at: new Date().toISOString(),
            }),
          ),
      ],
      [
        "with the wrong size",
        (id) =>
          encode(
            JSON.stringify({
              artifact_id: id,
              type: "doc",
              content_uri: "file:///x",
              content_hash: id,
              size_bytes: 1,
              created_at: new Date().toISOString(),
            }),
          ),
      ],
      [
        "with a content_hash that is not the id",
        (id, size) =>
          encode(
            JSON.stringify({
              artifact_id: id,
              type: "doc",
              content_uri: "file:///x",
              content_hash: sha256("other"),
              size_bytes: size,
              created_at: new Date().toISOString(),
            }),
          ),
      ],
      ["oversized", () => new Uint8Array(MAX_RECORD_BYTES + 1).fill(0x20)],
    ];

    it.each(damage)(
      "rebuilds a record that is %s from the content, writes it back and logs it",
      async (_why, make) => {
        const { record } = await registry.storeText("the content is the truth");
        const key = keyOf(record.artifact_id);
        await records.put(key, make(record.artifact_id, record.size_bytes));

        const found = await registry.get(record.artifact_id);
        expect(found!.record).toMatchObject({
          artifact_id: record.artifact_id,
          content_hash: record.artifact_id,
          size_bytes: record.size_bytes,
          content_uri: record.content_uri,
          type: "doc",
          mime: "text/plain; charset=utf-8",
          producer: "system",
        });
        expect(ContentRecordSchema.safeParse(found!.record).success).toBe(true);
        const written = JSON.parse(decode((await records.get(key))!));
        expect(written).toEqual(found!.record);
        expect(logger.lines).toHaveLength(1);
        expect(logger.lines[0]!.message).toContain("rebuilt from the content");
        // Now sound: read again without another repair.
        await registry.get(record.artifact_id);
        expect(logger.lines).toHaveLength(1);
      },
    );

    it("reads a deleted record as a deleted entry, not as one to rebuild: the content stays", async () => {
      const { record } = await registry.storeText("removed by hand");
      await records.delete(keyOf(record.artifact_id));
      expect(await registry.get(record.artifact_id)).toBeNull();
      expect(await blobs.has(record.artifact_id)).toBe(true);
      expect(logger.lines).toEqual([]);
    });

    it("sniffs text and binary content when rebuilding", async () => {
      const text = await registry.storeText('{"a":1}');
      const bytes = await registry.storeBytes(new Uint8Array([0xff, 0x00, 0x80]));
      for (const { record } of [text, bytes]) {
        await records.put(keyOf(record.artifact_id), encode("garbage"));
      }
      expect((await registry.get(text.record.artifact_id))?.record).toMatchObject({
        type: "doc",
        mime: "text/plain; charset=utf-8",
      });
      expect((await registry.get(bytes.record.artifact_id))?.record).toMatchObject({
        type: "data",
        mime: "application/octet-stream",
      });
    });

    it("corrects a record whose content_uri is stale and keeps its metadata", async () => {
      const { record } = await registry.storeText("moved", { summary: "kept", type: "plan" });
      const key = keyOf(record.artifact_id);
      await records.put(key, encode(JSON.stringify({ ...record, content_uri: "file:///old/place/content" })));
      const fixed = await registry.getRecord(record.artifact_id);
      expect(fixed).toEqual(record);
      expect(JSON.parse(decode((await records.get(key))!))).toEqual(record);
      expect(logger.lines[0]!.message).toContain("content_uri updated");
    });

    it("replaces a damaged record when the same content is stored again", async () => {
      const { record } = await registry.storeText("again");
      await records.put(keyOf(record.artifact_id), encode("garbage"));
      const again = await registry.storeText("again", { summary: "fresh" });
      expect(again.created).toBe(false);
      expect(again.record.summary).toBe("fresh");
      expect(await registry.getRecord(record.artifact_id)).toEqual(again.record);
    });
  });

  describe("listing and deleting", () => {
    it("lists records in id order, page by page", async () => {
      const stored = await Promise.all(["a", "b", "c", "d", "e"].map((text) => registry.storeText(text)));
      const ids = stored.map((result) => result.record.artifact_id).sort();

      const first = await registry.list({ limit: 2 });
      expect(first.items.map((record) => record.artifact_id)).toEqual(ids.slice(0, 2));
      const second = await registry.list({ limit: 2, cursor: first.cursor });
      expect(second.items.map((record) => record.artifact_id)).toEqual(ids.slice(2, 4));
      const third = await registry.list({ limit: 2, cursor: second.cursor });
      expect(third.items.map((record) => record.artifact_id)).toEqual(ids.slice(4));
      expect(third.cursor).toBeUndefined();

      expect(await listAll(registry)).toEqual(ids);
      expect((await registry.list()).items.map((record) => record.artifact_id)).toEqual(ids);
    });

    it("ignores foreign keys and records whose content is gone", async () => {
      const stored = await Promise.all(["a", "b", "c"].map((text) => registry.storeText(text)));
      const ids = stored.map((result) => result.record.artifact_id).sort();
      await records.put("README.txt", encode("not a record"));
      await records.put(`${ids[0]!.slice(0, 2)}/${ids[0]}/notes.txt`, encode("foreign file"));
      await records.put(`zz/${"f".repeat(64)}.json`, encode("wrong shard"));
      const orphan = sha256("orphan");
      await records.put(`${orphan.slice(0, 2)}/${orphan}.json`, encode("{}"));

      expect(await listAll(registry)).toEqual(ids);
      expect((await registry.list()).items.map((record) => record.artifact_id)).toEqual(ids);
    });

    it("rebuilds records in memory while listing and skips corrupted content with a warning", async () => {
      const good = await registry.storeText("good");
      const damaged = await registry.storeText("damaged record");
      const corrupted = await registry.storeText("will rot");
      await records.put(keyOf(damaged.record.artifact_id), encode("garbage"));
      await tamper(corrupted.record.artifact_id, encode("rotten!!"));
      await records.put(keyOf(corrupted.record.artifact_id), encode("garbage"));

      const listed = (await registry.list()).items;
      expect(listed.map((record) => record.artifact_id).sort()).toEqual(
        [good.record.artifact_id, damaged.record.artifact_id].sort(),
      );
      // Listing is a read: the damaged record was not written back.
      expect(decode((await records.get(keyOf(damaged.record.artifact_id)))!)).toBe("garbage");
      expect(logger.lines.some((line) => line.message.includes("skipped in listing"))).toBe(true);
    });

    it("gives the id of every record, without reading them, for the content store's garbage collection", async () => {
      const stored = await Promise.all(["x", "y"].map((text) => registry.storeText(text)));
      await records.put("README.txt", encode("not a record"));
      const ids: string[] = [];
      for await (const id of iterateContentRefIds({ records })) ids.push(id);
      expect(ids).toEqual(stored.map((result) => result.record.artifact_id).sort());
    });

    it("refuses bad list limits and cursors", async () => {
      for (const limit of [0, -1, 1001, 1.5, Number.NaN, "10"]) {
        await expectStowageError(registry.list({ limit: limit as number }), "INVALID_INPUT");
      }
      for (const cursor of [42, "", "x".repeat(5000)]) {
        await expectStowageError(registry.list({ cursor: cursor as string }), "INVALID_INPUT");
      }
    });

    it("deletes the record only: the entry is gone, the content stays for the store's garbage collection", async () => {
      const { record } = await registry.storeText("short-lived");
      await registry.delete(record.artifact_id);
      expect(await registry.get(record.artifact_id)).toBeNull();
      expect(await registry.getRecord(record.artifact_id)).toBeNull();
      expect(await keysOf(records)).toEqual([]);
      expect(await blobs.has(record.artifact_id)).toBe(true);
      await registry.delete(record.artifact_id);
      expect((await registry.storeText("short-lived")).created).toBe(true);
    });

    it("treats a record whose content was collected as absent until the content is stored again", async () => {
      const { record } = await registry.storeText("collected");
      await blobs.delete(record.artifact_id);
      expect(await registry.get(record.artifact_id)).toBeNull();
      expect(await registry.getRecord(record.artifact_id)).toBeNull();
      expect((await registry.list()).items).toEqual([]);
      const again = await registry.storeText("collected");
      expect(again.record).toEqual(record);
      expect(decode((await registry.get(record.artifact_id))!.content)).toBe("collected");
    });
  });

  describe("prefix", () => {
    it("keeps records under the prefix and refuses unsafe prefixes", async () => {
      const scoped = open(backend, { prefix: "content-refs/" });
      const { record } = await scoped.registry.storeText("scoped");
      const id = record.artifact_id;
      expect(await keysOf(scoped.records)).toEqual([`content-refs/${id.slice(0, 2)}/${id}.json`]);
      expect(record.content_uri).toBe(scoped.uriOf(id));
      expect((await scoped.registry.list()).items).toHaveLength(1);
      for (const prefix of ["../", "/abs/", "content-refs", "a//", "a\u0000/", 7]) {
        await expectStowageError(() => open(backend, { prefix: prefix as string }), "INVALID_INPUT");
      }
    });
  });
});

describe("createContentRegistry options", () => {
  const memoryContent = () => createBlobStore({ store: createMemoryObjectStore() });

  it("records the content store's URI when it has one, else the blob ref", async () => {
    const blobs = memoryContent();
    const onS3: ContentStore = { ...blobs, uriFor: (hash) => `s3://bucket/blobs/${hash}` };
    const s3 = createContentRegistry({ content: onS3, records: createMemoryObjectStore() });
    const id = sha256("x");
    expect((await s3.storeText("x")).record.content_uri).toBe(`s3://bucket/blobs/${id}`);
    const { uriFor: _none, ...noAddress } = blobs;
    const plain = createContentRegistry({ content: noAddress, records: createMemoryObjectStore() });
    expect((await plain.storeText("x")).record.content_uri).toBe(`blob:sha256:${id}`);
  });

  it("refuses a missing content store or records store, a bad cap or a bad clock", async () => {
    const content = memoryContent();
    const records = createMemoryObjectStore();
    await expectStowageError(() => createContentRegistry({} as never), "INVALID_INPUT");
    await expectStowageError(() => createContentRegistry(undefined as never), "INVALID_INPUT");
    await expectStowageError(() => createContentRegistry({ content } as never), "INVALID_INPUT");
    await expectStowageError(() => createContentRegistry({ records } as never), "INVALID_INPUT");
    await expectStowageError(
      () => createContentRegistry({ content: records as never, records }),
      "INVALID_INPUT",
    );
    for (const maxBytes of [0, -1, 1.5, "512"]) {
      await expectStowageError(
        () => createContentRegistry({ content, records, maxBytes: maxBytes as number }),
        "INVALID_INPUT",
      );
    }
    await expectStowageError(
      () => createContentRegistry({ content, records, now: 5 as never }),
      "INVALID_INPUT",
    );
    const broken = createContentRegistry({ content, records, now: () => new Date(Number.NaN) });
    await expectStowageError(broken.storeText("x"), "INVALID_INPUT");
  });

  it("uses the injected clock for created_at", async () => {
    const registry = createContentRegistry({
      content: memoryContent(),
      records: createMemoryObjectStore(),
      now: () => new Date("2026-03-04T05:06:07.000Z"),
    });
    expect((await registry.storeText("x")).record.created_at).toBe("2026-03-04T05:06:07.000Z");
  });
});

describe("repairs on a records store that refuses writes", () => {
  it("still serves sound content when the rebuilt record cannot be written, and says so", async () => {
    const content = createBlobStore({ store: createMemoryObjectStore() });
    const records = createMemoryObjectStore();
    const logger = captureLogger();
    const registry = createContentRegistry({ content, records, logger });
    const { record } = await registry.storeText("read-only later");
    await records.put(keyOf(record.artifact_id), new TextEncoder().encode("garbage"));

    // The same store, now refusing every write (a read-only mount, a revoked credential).
    const readOnly: ObjectStore = {
      ...records,
      put: async () => {
        throw new StowageError("FORBIDDEN", "read-only");
      },
    };
    const reader = createContentRegistry({ content, records: readOnly, logger });
    const found = await reader.get(record.artifact_id);
    expect(decode(found!.content)).toBe("read-only later");
    expect(found!.record.size_bytes).toBe(record.size_bytes);
    expect(logger.lines.at(-1)!.message).toContain("could not be written back");
  });
});
