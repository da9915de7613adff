import { randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { StowageError } from "../errors.js";
import type { ObjectStore } from "../object-store.js";
import { compareUtf8 } from "../utf8.js";
import {
  type DirectTransferConformanceOptions,
  directTransferConformance,
} from "./direct-transfer-conformance.js";
import { expectStowageError } from "./expect-stowage-error.js";
import { HOSTILE_KEYS, HOSTILE_PREFIXES, UNUSUAL_SAFE_KEYS } from "./hostile-keys.js";
import { loadVitest } from "./load-vitest.js";

const { afterEach, beforeEach, describe, expect, it } = await loadVitest("@stowage/core/testing");

export interface ObjectStoreConformanceOptions {
  /** Suite title, e.g. `fs object store`. */
  name: string;
  /** A fresh, empty store for one test; `namespace` is unique per test (a prefix, a directory…). */
  createStore(namespace: string): ObjectStore | Promise<ObjectStore>;
  /** Removes what a test left behind. */
  destroyStore?(store: ObjectStore, namespace: string): Promise<void>;
  /** When set, the suite is skipped and this reason printed. */
  skip?: string;
  /** Keys written by the pagination test; must exceed one 1,000-key page. Default 1,050. */
  paginationKeys?: number;
  /** Per-test timeout in ms, also for `destroyStore` after each test. Default 60,000. */
  timeoutMs?: number;
  /**
   * Runs the direct-transfer block (signed upload and download URLs), which every store with
   * `capabilities.directUpload` must pass. Omit for stores without direct URLs.
   */
  directTransfer?: DirectTransferConformanceOptions;
}

const encoder = new TextEncoder();
const text = (value: string) => encoder.encode(value);

/** Takes the first thing a listing gives (enough for its checks and errors to run), then stops. */
async function firstOf(listing: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of listing) break;
}

function sameBytes(actual: Uint8Array | null, expected: Uint8Array): void {
  expect(actual).toBeInstanceOf(Uint8Array);
  expect(actual!.byteLength).toBe(expected.byteLength);
  expect(
    Buffer.from(actual!.buffer, actual!.byteOffset, actual!.byteLength).equals(Buffer.from(expected)),
  ).toBe(true);
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return new Uint8Array(Buffer.concat(chunks));
}

/** A stream of `bytes` cut into chunks of uneven sizes, as a network would deliver them. */
function unevenStream(bytes: Uint8Array): ReadableStream<Uint8Array> {
  const sizes = [1, 7, 4096, 65_536, 100_003];
  let offset = 0;
  let turn = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      const end = Math.min(bytes.byteLength, offset + sizes[turn++ % sizes.length]!);
      controller.enqueue(bytes.slice(offset, end));
      offset = end;
    },
  });
}

/** What every group of the suite shares: the store of the running test, and `it` with the suite's timeout. */
interface SuiteContext {
  store(): ObjectStore;
  test(title: string, body: () => Promise<void>): void;
}

/** What is put comes back: every byte value and size, streams, content types. */
function describeBytes({ store, test }: SuiteContext): void {
  describe("bytes", () => {
    test("round-trips bytes of every size and value", async () => {
      const allByteValues = Uint8Array.from({ length: 256 }, (_, i) => i);
      const cases: [string, Uint8Array][] = [
        ["empty", new Uint8Array(0)],
        ["one", text("x")],
        ["all-byte-values", allByteValues],
        ["one-mib", new Uint8Array(randomBytes(1024 * 1024))],
      ];
      for (const [key, bytes] of cases) {
        const before = Date.now();
        const result = await store().put(key, bytes);
        expect(result).toEqual({ key, size: bytes.byteLength, created: true });
        sameBytes(await store().get(key), bytes);
        const info = await store().head(key);
        expect(info?.size).toBe(bytes.byteLength);
        expect(info?.lastModified).toBeInstanceOf(Date);
        // Servers keep whole seconds; allow for that and a little clock drift.
        expect(info!.lastModified.getTime()).toBeGreaterThanOrEqual(before - 5000);
        expect(info!.lastModified.getTime()).toBeLessThanOrEqual(Date.now() + 5000);
      }
    });

    test("keeps what was put even if the caller reuses its buffer", async () => {
      const bytes = text("original");
      await store().put("copy", bytes);
      bytes.fill(0);
      sameBytes(await store().get("copy"), text("original"));
    });

    test("hands back bytes of the caller's own: changing them changes neither the object nor the next get", async () => {
      const bytes = new Uint8Array(randomBytes(200 * 1024));
      await store().put("owned", bytes);
      const first = await store().get("owned");
      first!.fill(0);
      const second = await store().get("owned");
      sameBytes(second, bytes);
      second!.fill(1);
      sameBytes(await store().get("owned"), bytes);
      const stream = await store().stream("owned");
      sameBytes(await readAll(stream!), bytes);
    });

    test("round-trips a stream body delivered in uneven chunks", async () => {
      const bytes = new Uint8Array(randomBytes(3 * 1024 * 1024 + 17));
      const result = await store().put("streamed/body.bin", unevenStream(bytes));
      expect(result).toEqual({ key: "streamed/body.bin", size: bytes.byteLength, created: true });
      sameBytes(await store().get("streamed/body.bin"), bytes);
    });

    test("streams an object back", async () => {
      const bytes = new Uint8Array(randomBytes(2 * 1024 * 1024 + 5));
      await store().put("to-stream", bytes);
      const stream = await store().stream("to-stream");
      expect(stream).not.toBeNull();
      sameBytes(await readAll(stream!), bytes);
    });

    test("keeps the content type where the backend supports it", async () => {
      await store().put("typed.json", text("{}"), { contentType: "application/json" });
      const info = await store().head("typed.json");
      if (store().capabilities.contentType) expect(info?.contentType).toBe("application/json");
      else expect(info?.size).toBe(2);
    });

    test("rejects a malformed content type", async () => {
      for (const contentType of ["", "json", "text/plain\nx: y", "a".repeat(300)]) {
        await expectStowageError(store().put("typed", text("x"), { contentType }), "INVALID_INPUT");
      }
      expect(await store().head("typed")).toBeNull();
    });
  });
}

/** Missing keys, create-only and plain puts, deletes. */
function describeWrites({ store, test }: SuiteContext): void {
  describe("writes", () => {
    test("reads of a missing key return null; delete of a missing key succeeds", async () => {
      expect(await store().get("missing")).toBeNull();
      expect(await store().stream("missing")).toBeNull();
      expect(await store().head("missing")).toBeNull();
      expect(await store().touch("missing")).toBe(false);
      await store().delete("missing");
      await expectStowageError(store().move("missing", "elsewhere"), "NOT_FOUND");
      expect(await store().head("elsewhere")).toBeNull();
    });

    test("create-only put creates once, then fails with ALREADY_EXISTS and keeps the first", async () => {
      expect(await store().put("once", text("first"), { ifNoneMatch: "*" })).toEqual({
        key: "once",
        size: 5,
        created: true,
      });
      await expectStowageError(store().put("once", text("second"), { ifNoneMatch: "*" }), "ALREADY_EXISTS");
      await expectStowageError(
        store().put("once", unevenStream(text("third")), { ifNoneMatch: "*" }),
        "ALREADY_EXISTS",
      );
      sameBytes(await store().get("once"), text("first"));
    });

    test("a plain put overwrites and reports that nothing was created", async () => {
      await store().put("over", text("first version"));
      expect(await store().put("over", text("second"))).toEqual({ key: "over", size: 6, created: false });
      sameBytes(await store().get("over"), text("second"));
      expect((await store().head("over"))?.size).toBe(6);
    });

    test("delete removes the object from reads and listings", async () => {
      await store().put("gone/soon", text("x"));
      await store().put("gone/stays", text("y"));
      await store().delete("gone/soon");
      expect(await store().get("gone/soon")).toBeNull();
      expect(await store().head("gone/soon")).toBeNull();
      const page = await store().list({ prefix: "gone/" });
      expect(page.items.map((item) => item.key)).toEqual(["gone/stays"]);
    });
  });
}

/** Pages, prefixes, UTF-8 byte order and list options. */
function describeListing({ store, test }: SuiteContext, paginationKeys: number): void {
  describe("listing", () => {
    test(`paginates over ${paginationKeys} keys, each exactly once and in order`, async () => {
      const keys = Array.from({ length: paginationKeys }, (_, i) => `page/key-${String(i).padStart(5, "0")}`);
      const queue = [...keys, "pagf", "pag", "other/key"];
      const worker = async () => {
        for (let key = queue.pop(); key !== undefined; key = queue.pop()) await store().put(key, text(key));
      };
      await Promise.all(Array.from({ length: 16 }, worker));

      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store().list({ prefix: "page/", cursor });
        expect(page.items.length).toBeLessThanOrEqual(1000);
        for (const item of page.items) {
          expect(item.size).toBe(text(item.key).byteLength);
          expect(item.lastModified).toBeInstanceOf(Date);
        }
        seen.push(...page.items.map((item) => item.key));
        cursor = page.cursor;
        pages++;
      } while (cursor !== undefined);
      expect(pages).toBeGreaterThanOrEqual(2);
      expect(seen).toEqual(keys);

      const small: string[] = [];
      cursor = undefined;
      do {
        const page = await store().list({ prefix: "page/", cursor, limit: 100 });
        expect(page.items.length).toBeLessThanOrEqual(100);
        small.push(...page.items.map((item) => item.key));
        cursor = page.cursor;
      } while (cursor !== undefined);
      expect(small).toEqual(keys);

      const iterated: string[] = [];
      for await (const item of store().iterate({ prefix: "page/", pageSize: 250 })) iterated.push(item.key);
      expect(iterated).toEqual(keys);

      let everything = 0;
      for await (const _ of store().iterate()) everything++;
      expect(everything).toBe(paginationKeys + 3);

      const named: string[] = [];
      for await (const key of store().keys({ prefix: "page/" })) named.push(key);
      expect(named).toEqual(keys);

      for (const pageSize of [undefined, 250]) {
        const paged: string[] = [];
        for await (const page of store().keys({ prefix: "page/", pageSize }).byPage()) {
          expect(page.length).toBeGreaterThan(0);
          expect(page.length).toBeLessThanOrEqual(pageSize ?? 1000);
          paged.push(...page);
        }
        expect(paged).toEqual(keys);
      }
    });

    test("a prefix is a raw string prefix, not a directory", async () => {
      for (const key of ["logs/a", "logs-b", "logsx/c", "log", "other"]) await store().put(key, text(key));
      const keysFor = async (prefix: string) =>
        (await store().list({ prefix })).items.map((item) => item.key);
      expect(await keysFor("logs")).toEqual(["logs-b", "logs/a", "logsx/c"]);
      expect(await keysFor("logs/")).toEqual(["logs/a"]);
      expect(await keysFor("log")).toEqual(["log", "logs-b", "logs/a", "logsx/c"]);
      expect(await keysFor("nothing")).toEqual([]);
      expect(await keysFor("")).toEqual(["log", "logs-b", "logs/a", "logsx/c", "other"]);
      const namesFor = async (prefix: string) => {
        const names: string[] = [];
        for await (const key of store().keys({ prefix })) names.push(key);
        return names;
      };
      const pagesFor = async (prefix: string) => {
        const pages: (readonly string[])[] = [];
        for await (const page of store().keys({ prefix }).byPage()) pages.push(page);
        return pages.flat();
      };
      for (const prefix of ["logs", "logs/", "log", "nothing", ""]) {
        expect(await namesFor(prefix)).toEqual(await keysFor(prefix));
        expect(await pagesFor(prefix)).toEqual(await keysFor(prefix));
      }
    });

    test("lists keys in UTF-8 byte order", async () => {
      const keys = ["a-c", "a/b", "a\u00e9", "a\ue000", "a\u{1f600}", "B", "b"];
      for (const key of keys) await store().put(key, text("x"));
      const listed = (await store().list()).items.map((item) => item.key);
      expect(listed).toEqual([...keys].sort(compareUtf8));
      expect(listed).toEqual(["B", "a-c", "a/b", "a\u00e9", "a\ue000", "a\u{1f600}", "b"]);
      const named: string[] = [];
      for await (const key of store().keys()) named.push(key);
      expect(named).toEqual(listed);
      const paged: string[] = [];
      for await (const page of store().keys({ pageSize: 2 }).byPage()) paged.push(...page);
      expect(paged).toEqual(listed);
    });

    test("an empty store lists nothing and has no next page", async () => {
      expect(await store().list()).toEqual({ items: [], cursor: undefined });
      expect(await store().list({ prefix: "none/" })).toEqual({ items: [], cursor: undefined });
    });

    test("rejects invalid list options", async () => {
      for (const limit of [0, -1, 1001, 1.5, Number.NaN, "10"]) {
        await expectStowageError(store().list({ limit: limit as number }), "INVALID_INPUT");
      }
      for (const cursor of ["", 5, "c".repeat(5000)]) {
        await expectStowageError(store().list({ cursor: cursor as string }), "INVALID_INPUT");
      }
      for (const pageSize of [0, 1001, 1.5, "10"]) {
        const listing = store().keys({ pageSize: pageSize as number });
        await expectStowageError(firstOf(listing), "INVALID_INPUT");
        await expectStowageError(firstOf(listing.byPage()), "INVALID_INPUT");
      }
    });
  });
}

/** Hostile keys, prefixes and bodies refused before the backend; unusual safe keys kept. */
function describeKeys({ store, test }: SuiteContext): void {
  describe("keys", () => {
    describe("rejects hostile input before touching the backend", () => {
      for (const { value, why } of HOSTILE_KEYS) {
        test(`key: ${why}`, async () => {
          const key = value as string;
          await expectStowageError(store().put(key, text("x")), "INVALID_INPUT");
          await expectStowageError(store().put(key, unevenStream(text("x"))), "INVALID_INPUT");
          await expectStowageError(store().get(key), "INVALID_INPUT");
          await expectStowageError(store().stream(key), "INVALID_INPUT");
          await expectStowageError(store().head(key), "INVALID_INPUT");
          await expectStowageError(store().delete(key), "INVALID_INPUT");
          await expectStowageError(store().touch(key), "INVALID_INPUT");
          await expectStowageError(store().move(key, "safe"), "INVALID_INPUT");
          await expectStowageError(store().move("safe", key), "INVALID_INPUT");
          expect((await store().list()).items).toEqual([]);
        });
      }
      for (const { value, why } of HOSTILE_PREFIXES) {
        test(`prefix: ${why}`, async () => {
          await expectStowageError(store().list({ prefix: value as string }), "INVALID_INPUT");
          const prefix = value as string;
          await expectStowageError(firstOf(store().iterate({ prefix })), "INVALID_INPUT");
          await expectStowageError(firstOf(store().keys({ prefix })), "INVALID_INPUT");
          await expectStowageError(firstOf(store().keys({ prefix }).byPage()), "INVALID_INPUT");
        });
      }
      test("a body that is neither bytes nor a stream", async () => {
        for (const body of ["text", null, 42, { length: 3 }, [1, 2, 3]]) {
          await expectStowageError(store().put("body", body as unknown as Uint8Array), "INVALID_INPUT");
        }
        await expectStowageError(
          store().put("body", text("x"), { ifNoneMatch: "etag" as "*" }),
          "INVALID_INPUT",
        );
        expect(await store().head("body")).toBeNull();
      });
    });

    test("round-trips unusual but safe keys", async () => {
      for (const key of UNUSUAL_SAFE_KEYS) {
        await store().put(key, text(key));
        sameBytes(await store().get(key), text(key));
      }
      const listed = (await store().list()).items.map((item) => item.key);
      expect(listed).toEqual([...UNUSUAL_SAFE_KEYS].sort(compareUtf8));
    });
  });
}

/** Aborted and broken writes leave nothing; concurrent writers leave one writer's bytes. */
function describeAbortsAndRaces({ store, test }: SuiteContext): void {
  describe("aborts and races", () => {
    test("an already-aborted signal fails with ABORTED and writes nothing", async () => {
      const controller = new AbortController();
      controller.abort(new Error("stop"));
      const { signal } = controller;
      await expectStowageError(store().put("aborted", text("x"), { signal }), "ABORTED");
      await expectStowageError(store().get("aborted", { signal }), "ABORTED");
      await expectStowageError(store().list({ signal }), "ABORTED");
      await expectStowageError(firstOf(store().keys({ signal })), "ABORTED");
      await expectStowageError(firstOf(store().keys({ signal }).byPage()), "ABORTED");
      expect(await store().head("aborted")).toBeNull();
    });

    test("aborting a streaming put midway fails with ABORTED and leaves no object", async () => {
      const controller = new AbortController();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(stream) {
          if (sent === 3) controller.abort(new Error("user cancelled"));
          if (sent >= 3) await sleep(20);
          stream.enqueue(new Uint8Array(64 * 1024).fill(sent++ % 256));
        },
      });
      await expectStowageError(store().put("half-written", body, { signal: controller.signal }), "ABORTED");
      expect(await store().head("half-written")).toBeNull();
      expect((await store().list()).items).toEqual([]);
    });

    test("a body stream that fails midway leaves no object", async () => {
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(stream) {
          if (sent++ === 4) stream.error(new Error("connection reset"));
          else stream.enqueue(new Uint8Array(32 * 1024).fill(7));
        },
      });
      await expect(store().put("broken", body)).rejects.toThrow();
      expect(await store().head("broken")).toBeNull();
      expect((await store().list()).items).toEqual([]);
    });

    test("concurrent plain puts of one key leave exactly one writer's bytes", async () => {
      const bodies = Array.from({ length: 8 }, (_, i) => new Uint8Array(256 * 1024).fill(i + 1));
      const results = await Promise.all(
        bodies.map((body, i) => store().put("contended", i % 2 ? unevenStream(body) : body)),
      );
      for (const result of results) expect(result.size).toBe(256 * 1024);
      const stored = await store().get("contended");
      expect(stored).not.toBeNull();
      const fill = stored![0]!;
      sameBytes(stored, bodies[fill - 1]!);
      expect((await store().list()).items.map((item) => item.key)).toEqual(["contended"]);
    });

    test("concurrent create-only puts of one key: the stored bytes are a winner's", async () => {
      const bodies = Array.from({ length: 8 }, (_, i) => new Uint8Array(128 * 1024).fill(i + 1));
      const settled = await Promise.allSettled(
        bodies.map((body) => store().put("race", body, { ifNoneMatch: "*" })),
      );
      const winners = settled.flatMap((result, i) => (result.status === "fulfilled" ? [i + 1] : []));
      for (const result of settled) {
        if (result.status === "rejected") expect(StowageError.is(result.reason, "ALREADY_EXISTS")).toBe(true);
      }
      if (store().capabilities.atomicCreateOnly) expect(winners).toHaveLength(1);
      else expect(winners.length).toBeGreaterThanOrEqual(1);
      const stored = await store().get("race");
      expect(winners).toContain(stored![0]);
      sameBytes(stored, bodies[stored![0]! - 1]!);
    });
  });
}

/** Moves, touches, and the capabilities a store declares. */
function describeMoveAndTouch(
  { store, test }: SuiteContext,
  directTransfer: DirectTransferConformanceOptions | undefined,
): void {
  describe("move, touch and capabilities", () => {
    test("move renames an object; create-only move never replaces", async () => {
      await store().put("from", text("moving"));
      expect(await store().move("from", "dir/to")).toEqual({ key: "dir/to", size: 6, created: true });
      expect(await store().head("from")).toBeNull();
      sameBytes(await store().get("dir/to"), text("moving"));

      await store().put("other", text("other"));
      await expectStowageError(store().move("other", "dir/to", { ifNoneMatch: "*" }), "ALREADY_EXISTS");
      sameBytes(await store().get("other"), text("other"));
      sameBytes(await store().get("dir/to"), text("moving"));

      expect(await store().move("other", "dir/to")).toEqual({ key: "dir/to", size: 5, created: false });
      sameBytes(await store().get("dir/to"), text("other"));
      expect(await store().move("dir/to", "dir/to")).toEqual({ key: "dir/to", size: 5, created: false });
      await expectStowageError(store().move("dir/to", "dir/to", { ifNoneMatch: "*" }), "ALREADY_EXISTS");
    });

    test("touch refreshes lastModified and keeps the bytes", async () => {
      await store().put("touched", text("same"));
      const before = (await store().head("touched"))!.lastModified.getTime();
      // Some backends keep whole seconds.
      await sleep(1100);
      expect(await store().touch("touched")).toBe(true);
      const after = (await store().head("touched"))!.lastModified.getTime();
      expect(after).toBeGreaterThan(before);
      sameBytes(await store().get("touched"), text("same"));
    });

    test("a store that declares moveKeepsLastModified keeps it across a move", async () => {
      if (!store().capabilities.moveKeepsLastModified) return;
      await store().put("stamped", text("x"));
      const before = (await store().head("stamped"))!.lastModified.getTime();
      // The move must come at a later time than the put, or a restamping move would pass too.
      await sleep(before % 1000 === 0 ? 1100 : 20);
      await store().move("stamped", "stamped-moved");
      expect((await store().head("stamped-moved"))!.lastModified.getTime()).toBe(before);
      expect(store().capabilities.nativeMove).toBe(true);
    });

    test("declares its optional features consistently", async () => {
      const current = store();
      const { capabilities } = current;
      expect(typeof capabilities.atomicCreateOnly).toBe("boolean");
      expect(capabilities.directUpload).toBe(typeof current.createUploadUrl === "function");
      expect(capabilities.directDownload).toBe(typeof current.createDownloadUrl === "function");
      if (capabilities.directUpload) {
        expect(directTransfer, "a store with direct URLs runs the direct-transfer block").toBeDefined();
      }
      if (current.uriFor) {
        const uri = current.uriFor("some/key.txt");
        expect(uri).toMatch(/^[a-z][a-z0-9+.-]*:\/\/\S+$/);
        expect(uri.endsWith("some/key.txt")).toBe(true);
      }
    });
  });
}

/**
 * The shared behaviour every ObjectStore must have. Call it from a driver's test file; the
 * driver's own file then adds only what is specific to that backend.
 */
export function describeObjectStoreConformance(options: ObjectStoreConformanceOptions): void {
  const { name, paginationKeys = 1050, timeoutMs = 60_000 } = options;
  if (options.skip) {
    console.warn(`[stowage] ${name} conformance skipped: ${options.skip}`);
    describe.skip(`${name} conformance (skipped: ${options.skip})`, () => {
      it("needs its backend", () => {});
    });
    return;
  }

  describe(`${name} conformance`, () => {
    let store: ObjectStore;
    let namespace: string;

    beforeEach(async () => {
      namespace = `t-${randomUUID()}`;
      store = await options.createStore(namespace);
    });

    // destroyStore empties what a test wrote (1,050 keys after the pagination test): same bound as a test.
    afterEach(async () => {
      await options.destroyStore?.(store, namespace);
    }, timeoutMs);

    const context: SuiteContext = {
      store: () => store,
      test: (title, body) => it(title, body, timeoutMs),
    };
    describeBytes(context);
    describeWrites(context);
    describeListing(context, paginationKeys);
    describeKeys(context);
    describeAbortsAndRaces(context);
    describeMoveAndTouch(context, options.directTransfer);
    if (options.directTransfer) directTransferConformance(context, options.directTransfer);
  });
}
