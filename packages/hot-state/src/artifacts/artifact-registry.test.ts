import { createHash } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createMemoryObjectStore, type ObjectStore, StowageError } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { beforeEach, describe, expect, it } from "vitest";
import { captureLogger } from "../../test/capture-logger.js";
import { codeOf } from "../../test/codes.js";
import { HOSTILE_ARTIFACT_IDS } from "../../test/hostile-ids.js";
import { ArtifactRecordSchema } from "../schemas/artifact-record-schema.js";
import {
  type ArtifactRegistry,
  createArtifactRegistry,
  DEFAULT_MAX_ARTIFACT_BYTES,
} from "./artifact-registry.js";
import { MAX_RECORD_BYTES } from "./record-state.js";

const base = await tempDirectory("stowage-hot-state-registry-");

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");
const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
let counter = 0;

interface Backend {
  name: string;
  open(options?: { prefix?: string; maxBytes?: number }): {
    store: ObjectStore;
    registry: ArtifactRegistry;
    logger: ReturnType<typeof captureLogger>;
    uriOf(key: string): string;
  };
}

const BACKENDS: Backend[] = [
  {
    name: "memory store",
    open(options = {}) {
      const store = createMemoryObjectStore();
      const logger = captureLogger();
      const baseUri = "s3://artifact-bucket/agents/";
      return {
        store,
        logger,
        registry: createArtifactRegistry({ store, baseUri, logger, ...options }),
        uriOf: (key) => baseUri + key,
      };
    },
  },
  {
    name: "fs store",
    open(options = {}) {
      const root = join(base, `fs-${counter++}`);
      const store = createFsObjectStore({ root });
      const logger = captureLogger();
      return {
        store,
        logger,
        registry: createArtifactRegistry({ store, logger, ...options }),
        uriOf: (key) => pathToFileURL(store.pathFor(key)).href,
      };
    },
  },
];

describe.each(BACKENDS)("artifact registry over the $name", (backend) => {
  let store: ObjectStore;
  let registry: ArtifactRegistry;
  let logger: ReturnType<typeof captureLogger>;
  let uriOf: (key: string) => string;

  beforeEach(() => {
    ({ store, registry, logger, uriOf } = backend.open());
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
        content_uri: uriOf(`${id.slice(0, 2)}/${id}/content`),
        content_hash: id,
        size_bytes: encode(text).byteLength,
        created_at: record.created_at,
        producer: "executor",
        summary: "notes",
        mime: "text/plain; charset=utf-8",
      });
      expect(ArtifactRecordSchema.parse(record)).toEqual(record);
      expect(Date.now() - Date.parse(record.created_at)).toBeLessThan(60_000);
      expect(registry.keysFor(id)).toEqual({
        content: `${id.slice(0, 2)}/${id}/content`,
        record: `${id.slice(0, 2)}/${id}/record.json`,
      });
    });

    it("gives the same content the same id and keeps the first record", async () => {
      const first = await registry.storeText("same", { type: "log" });
      const second = await registry.storeText("same", { type: "code", summary: "other" });
      expect(second.created).toBe(false);
      expect(second.record).toEqual(first.record);
      expect((await registry.list()).items).toHaveLength(1);
    });

    it("stores equal JSON values under one id whatever their key order", async () => {
      const a = await registry.storeJson({ b: [1, 2], a: { y: 1, x: "é" } });
      const b = await registry.storeJson({ a: { x: "é", y: 1 }, b: [1, 2] });
      expect(b.record.artifact_id).toBe(a.record.artifact_id);
      expect(b.created).toBe(false);
      expect(a.record).toMatchObject({ type: "data", mime: "application/json" });
      expect(decode((await registry.get(a.record.artifact_id))!.content)).toBe(
        '{"a":{"x":"é","y":1},"b":[1,2]}',
      );
      expect(await codeOf(registry.storeJson({ when: new Date() }))).toBe("INVALID_INPUT");
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

    it("refuses content over the cap with TOO_LARGE and writes nothing", async () => {
      const small = backend.open({ maxBytes: 8 });
      expect((await small.registry.storeText("12345678")).created).toBe(true);
      expect(await codeOf(small.registry.storeText("123456789"))).toBe("TOO_LARGE");
      expect(await codeOf(small.registry.storeText("é".repeat(5)))).toBe("TOO_LARGE");
      expect(await codeOf(small.registry.storeBytes(new Uint8Array(9)))).toBe("TOO_LARGE");
      expect(await codeOf(small.registry.storeJson({ abcdefgh: 1 }))).toBe("TOO_LARGE");
      expect((await small.store.list()).items).toHaveLength(2);
      expect(registry.maxBytes).toBe(DEFAULT_MAX_ARTIFACT_BYTES);
      expect(await codeOf(registry.storeBytes(new Uint8Array(DEFAULT_MAX_ARTIFACT_BYTES + 1)))).toBe(
        "TOO_LARGE",
      );
    });

    it.each([
      [{ type: "image" }, "an unknown type"],
      [{ summary: "s".repeat(501) }, "a summary over 500 characters"],
      [{ mime: "text plain" }, "a malformed MIME type"],
      [{ producer: "root" }, "an unknown producer"],
      [{ summary: "a\u0000b" }, "NUL in the summary"],
      [{ colour: "red" }, "an unknown option"],
    ])("refuses option %j (%s) and writes nothing", async (options, _why) => {
      expect(await codeOf(registry.storeText("x", options as never))).toBe("INVALID_INPUT");
      expect((await store.list()).items).toEqual([]);
    });

    it("refuses text that UTF-8 cannot carry, and non-text", async () => {
      expect(await codeOf(registry.storeText("bad\ud800"))).toBe("INVALID_INPUT");
      expect(await codeOf(registry.storeText(42 as never))).toBe("INVALID_INPUT");
      expect(await codeOf(registry.storeBytes("text" as never))).toBe("INVALID_INPUT");
      expect((await store.list()).items).toEqual([]);
    });

    it("stops with ABORTED when the signal has fired", async () => {
      const controller = new AbortController();
      controller.abort();
      expect(await codeOf(registry.storeText("x", { signal: controller.signal }))).toBe("ABORTED");
      expect(await codeOf(registry.get(sha256("x"), { signal: controller.signal }))).toBe("ABORTED");
    });

    it("keeps one consistent artifact when many writers store the same content at once", async () => {
      const results = await Promise.all(Array.from({ length: 12 }, () => registry.storeText("contended")));
      expect(results.filter((result) => result.created)).toHaveLength(1);
      const stored = await registry.get(results[0]!.record.artifact_id);
      for (const result of results) expect(result.record).toEqual(stored!.record);
      expect((await store.list()).items).toHaveLength(2);
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
      expect(await registry.has(record.artifact_id)).toBe(true);
      const absent = sha256("never stored");
      expect(await registry.get(absent)).toBeNull();
      expect(await registry.getRecord(absent)).toBeNull();
      expect(await registry.has(absent)).toBe(false);
      expect(await codeOf(registry.rebuildRecord(absent))).toBe("NOT_FOUND");
    });

    it.each(HOSTILE_ARTIFACT_IDS)("refuses the id $why everywhere with INVALID_INPUT", async ({ value }) => {
      const id = value as string;
      expect(await codeOf(registry.get(id))).toBe("INVALID_INPUT");
      expect(await codeOf(registry.getRecord(id))).toBe("INVALID_INPUT");
      expect(await codeOf(registry.has(id))).toBe("INVALID_INPUT");
      expect(await codeOf(registry.delete(id))).toBe("INVALID_INPUT");
      expect(await codeOf(registry.rebuildRecord(id))).toBe("INVALID_INPUT");
      expect(await codeOf(() => registry.keysFor(id))).toBe("INVALID_INPUT");
      // An undefined cursor is the first page; every other hostile value is refused.
      if (value !== undefined) expect(await codeOf(registry.list({ cursor: id }))).toBe("INVALID_INPUT");
    });

    it("refuses corrupted content with INTEGRITY instead of returning it", async () => {
      const { record } = await registry.storeText("pristine");
      const { content } = registry.keysFor(record.artifact_id);
      await store.put(content, encode("tampered"));
      expect(await codeOf(registry.get(record.artifact_id))).toBe("INTEGRITY");
      expect(await codeOf(registry.rebuildRecord(record.artifact_id))).toBe("INTEGRITY");
      // Storing the real content again repairs it.
      expect((await registry.storeText("pristine")).created).toBe(false);
      expect(decode((await registry.get(record.artifact_id))!.content)).toBe("pristine");
      expect(logger.lines.map((line) => line.message)).toEqual([
        expect.stringContaining("corrupted; rewritten"),
      ]);
    });
  });

  describe("rebuilding records", () => {
    const damage: [string, (id: string, size: number) => Uint8Array | null][] = [
      ["missing", () => null],
      ["not UTF-8", () => new Uint8Array([0xff, 0xfe, 0x00])],
      ["not JSON", () => encode("{ half a record")],
      ["JSON of the wrong shape", () => encode(JSON.stringify({ hello: "world" }))],
      [
        "about another artifact",
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
        const keys = registry.keysFor(record.artifact_id);
        const bad = make(record.artifact_id, record.size_bytes);
        if (bad === null) await store.delete(keys.record);
        else await store.put(keys.record, bad);

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
        expect(ArtifactRecordSchema.safeParse(found!.record).success).toBe(true);
        const written = JSON.parse(decode((await store.get(keys.record))!));
        expect(written).toEqual(found!.record);
        expect(logger.lines).toHaveLength(1);
        expect(logger.lines[0]!.message).toContain("rebuilt from the content");
        // Now sound: read again without another repair.
        await registry.get(record.artifact_id);
        expect(logger.lines).toHaveLength(1);
      },
    );

    it("sniffs JSON and binary content when rebuilding", async () => {
      const json = await registry.storeJson({ a: 1 });
      const bytes = await registry.storeBytes(new Uint8Array([0xff, 0x00, 0x80]));
      for (const { record } of [json, bytes]) await store.delete(registry.keysFor(record.artifact_id).record);
      expect(await registry.rebuildRecord(json.record.artifact_id)).toMatchObject({
        type: "data",
        mime: "application/json",
      });
      expect(await registry.rebuildRecord(bytes.record.artifact_id)).toMatchObject({
        type: "data",
        mime: "application/octet-stream",
      });
    });

    it("corrects a record whose content_uri is stale and keeps its metadata", async () => {
      const { record } = await registry.storeText("moved", { summary: "kept", type: "plan" });
      const keys = registry.keysFor(record.artifact_id);
      await store.put(
        keys.record,
        encode(JSON.stringify({ ...record, content_uri: "file:///old/place/content" })),
      );
      const fixed = await registry.getRecord(record.artifact_id);
      expect(fixed).toEqual(record);
      expect(JSON.parse(decode((await store.get(keys.record))!))).toEqual(record);
      expect(logger.lines[0]!.message).toContain("content_uri updated");
    });

    it("replaces a damaged record when the same content is stored again", async () => {
      const { record } = await registry.storeText("again");
      await store.put(registry.keysFor(record.artifact_id).record, encode("garbage"));
      const again = await registry.storeText("again", { summary: "fresh" });
      expect(again.created).toBe(false);
      expect(again.record.summary).toBe("fresh");
      expect(await registry.getRecord(record.artifact_id)).toEqual(again.record);
    });
  });

  describe("listing and deleting", () => {
    it("lists records in id order, page by page, ignoring foreign keys and orphan records", async () => {
      const stored = await Promise.all(["a", "b", "c", "d", "e"].map((text) => registry.storeText(text)));
      const ids = stored.map((result) => result.record.artifact_id).sort();
      await store.put("README.txt", encode("not an artifact"));
      await store.put(
        `${ids[0]!.slice(0, 2)}/${ids[0]}/notes.txt`,
        encode("foreign file in an artifact directory"),
      );
      await store.put(`zz/${"f".repeat(64)}/content`, encode("wrong shard"));
      const orphan = sha256("orphan");
      await store.put(`${orphan.slice(0, 2)}/${orphan}/record.json`, encode("{}"));

      const first = await registry.list({ limit: 2 });
      expect(first.items.map((record) => record.artifact_id)).toEqual(ids.slice(0, 2));
      const second = await registry.list({ limit: 2, cursor: first.cursor });
      expect(second.items.map((record) => record.artifact_id)).toEqual(ids.slice(2, 4));
      const third = await registry.list({ limit: 2, cursor: second.cursor });
      expect(third.items.map((record) => record.artifact_id)).toEqual(ids.slice(4));
      expect(third.cursor).toBeUndefined();

      const all: string[] = [];
      for await (const record of registry.iterate()) all.push(record.artifact_id);
      expect(all).toEqual(ids);
      expect((await registry.list()).items.map((record) => record.artifact_id)).toEqual(ids);
    });

    it("rebuilds records in memory while listing and skips corrupted content with a warning", async () => {
      const good = await registry.storeText("good");
      const unrecorded = await registry.storeText("no record");
      const corrupted = await registry.storeText("will rot");
      await store.delete(registry.keysFor(unrecorded.record.artifact_id).record);
      await store.put(registry.keysFor(corrupted.record.artifact_id).content, encode("rotten"));
      await store.delete(registry.keysFor(corrupted.record.artifact_id).record);

      const listed = (await registry.list()).items;
      expect(listed.map((record) => record.artifact_id).sort()).toEqual(
        [good.record.artifact_id, unrecorded.record.artifact_id].sort(),
      );
      // Listing is a read: the missing record was not written back.
      expect(await store.get(registry.keysFor(unrecorded.record.artifact_id).record)).toBeNull();
      expect(logger.lines.some((line) => line.message.includes("skipped in listing"))).toBe(true);
    });

    it("refuses bad list limits", async () => {
      for (const limit of [0, -1, 1001, 1.5, Number.NaN, "10"]) {
        expect(await codeOf(registry.list({ limit: limit as number }))).toBe("INVALID_INPUT");
      }
    });

    it("deletes content and record; deleting again is not an error", async () => {
      const { record } = await registry.storeText("short-lived");
      await registry.delete(record.artifact_id);
      expect(await registry.get(record.artifact_id)).toBeNull();
      expect((await store.list()).items).toEqual([]);
      await registry.delete(record.artifact_id);
    });

    it("treats a record left without content (a crash during delete) as absent", async () => {
      const { record } = await registry.storeText("half deleted");
      await store.delete(registry.keysFor(record.artifact_id).content);
      expect(await registry.get(record.artifact_id)).toBeNull();
      expect(await registry.getRecord(record.artifact_id)).toBeNull();
      expect((await registry.list()).items).toEqual([]);
      const again = await registry.storeText("half deleted");
      expect(again.created).toBe(true);
    });
  });

  describe("prefix", () => {
    it("keeps artifacts under the prefix and refuses unsafe prefixes", async () => {
      const scoped = backend.open({ prefix: "artifacts/" });
      const { record } = await scoped.registry.storeText("scoped");
      const id = record.artifact_id;
      expect(scoped.registry.keysFor(id).content).toBe(`artifacts/${id.slice(0, 2)}/${id}/content`);
      expect(record.content_uri).toBe(scoped.uriOf(`artifacts/${id.slice(0, 2)}/${id}/content`));
      expect((await scoped.registry.list()).items).toHaveLength(1);
      for (const prefix of ["../", "/abs/", "artifacts", "a//", "a\u0000/", 7]) {
        expect(await codeOf(() => backend.open({ prefix: prefix as string }))).toBe("INVALID_INPUT");
      }
    });
  });
});

describe("createArtifactRegistry options", () => {
  it("needs a baseUri for stores that are not on the file system", async () => {
    const store = createMemoryObjectStore();
    expect(await codeOf(() => createArtifactRegistry({ store }))).toBe("INVALID_INPUT");
    for (const baseUri of ["http://x/", "s3://bucket", "file:///tmp/with space/", "", 5]) {
      expect(await codeOf(() => createArtifactRegistry({ store, baseUri: baseUri as string }))).toBe(
        "INVALID_INPUT",
      );
    }
    const s3 = createArtifactRegistry({ store, baseUri: "s3://bucket/a/" });
    expect((await s3.storeText("x")).record.content_uri).toMatch(
      /^s3:\/\/bucket\/a\/[a-f0-9]{2}\/[a-f0-9]{64}\/content$/,
    );
  });

  it("refuses a missing store, a bad cap or a bad clock", async () => {
    const store = createMemoryObjectStore();
    expect(await codeOf(() => createArtifactRegistry({} as never))).toBe("INVALID_INPUT");
    expect(await codeOf(() => createArtifactRegistry(undefined as never))).toBe("INVALID_INPUT");
    for (const maxBytes of [0, -1, 1.5, "512"]) {
      expect(
        await codeOf(() =>
          createArtifactRegistry({ store, baseUri: "s3://b/", maxBytes: maxBytes as number }),
        ),
      ).toBe("INVALID_INPUT");
    }
    expect(await codeOf(() => createArtifactRegistry({ store, baseUri: "s3://b/", now: 5 as never }))).toBe(
      "INVALID_INPUT",
    );
    const broken = createArtifactRegistry({ store, baseUri: "s3://b/", now: () => new Date(Number.NaN) });
    expect(await codeOf(broken.storeText("x"))).toBe("INVALID_INPUT");
  });

  it("uses the injected clock for created_at", async () => {
    const registry = createArtifactRegistry({
      store: createMemoryObjectStore(),
      baseUri: "s3://b/",
      now: () => new Date("2026-03-04T05:06:07.000Z"),
    });
    expect((await registry.storeText("x")).record.created_at).toBe("2026-03-04T05:06:07.000Z");
  });
});

describe("repairs on a store that refuses writes", () => {
  it("still serves sound content when the rebuilt record cannot be written, and says so", async () => {
    const store = createMemoryObjectStore();
    const logger = captureLogger();
    const registry = createArtifactRegistry({ store, baseUri: "s3://b/", logger });
    const { record } = await registry.storeText("read-only later");
    await store.delete(registry.keysFor(record.artifact_id).record);

    // The same store, now refusing every write (a read-only mount, a revoked credential).
    const readOnly: ObjectStore = {
      ...store,
      put: async () => {
        throw new StowageError("FORBIDDEN", "read-only");
      },
    };
    const reader = createArtifactRegistry({ store: readOnly, baseUri: "s3://b/", logger });
    const found = await reader.get(record.artifact_id);
    expect(decode(found!.content)).toBe("read-only later");
    expect(found!.record.size_bytes).toBe(record.size_bytes);
    expect(logger.lines.at(-1)!.message).toContain("could not be written back");
    expect(await codeOf(reader.rebuildRecord(record.artifact_id))).toBe("FORBIDDEN");
  });
});
