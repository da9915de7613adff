import { describeObjectStoreConformance, expectStowageError } from "@stowage/core/testing";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createPostgresObjectStore, MAX_OBJECT_BYTES_LIMIT } from "../src/object-store.js";
import { blobs } from "../src/schema.js";
import { describeBackends } from "./backends.js";

const text = (value: string) => new TextEncoder().encode(value);

describeBackends("postgres object store", (backend) => {
  describeObjectStoreConformance({
    name: `postgres object store on ${backend.name}`,
    createStore: (namespace) => createPostgresObjectStore({ db: backend.connection().db, namespace }),
    destroyStore: async (_store, namespace) => {
      await backend.connection().db.delete(blobs).where(eq(blobs.namespace, namespace));
    },
  });

  describe("specific to the table", () => {
    it("namespaces share the table but never a key", async () => {
      const { db } = backend.connection();
      const a = createPostgresObjectStore({ db, namespace: "ns-a" });
      const b = createPostgresObjectStore({ db, namespace: "ns-b" });
      await a.put("same/key", text("from a"));
      await b.put("same/key", text("from b"));
      expect(new TextDecoder().decode((await a.get("same/key"))!)).toBe("from a");
      expect((await b.list()).items.map((item) => item.key)).toEqual(["same/key"]);
      await a.delete("same/key");
      expect(await b.head("same/key")).not.toBeNull();
      await b.delete("same/key");
    });

    it("gets asked for together (read in one statement) give each caller its own key's bytes, and remember nothing", async () => {
      const { db } = backend.connection();
      const store = createPostgresObjectStore({ db, namespace: "ns-batched" });
      const other = createPostgresObjectStore({ db, namespace: "ns-batched-other" });
      const keys = Array.from({ length: 40 }, (_, i) => `screenshots/${i}.png`);
      for (const [i, key] of keys.entries()) await store.put(key, text(`image ${i}`));
      await other.put("screenshots/40.png", text("another namespace's"));
      // 40 present, one missing, one only in another namespace, and one key asked for twice.
      const asked = [...keys, "screenshots/missing.png", "screenshots/40.png", "screenshots/7.png"];
      const got = await Promise.all(asked.map((key) => store.get(key)));
      expect(got.map((bytes) => (bytes ? new TextDecoder().decode(bytes) : null))).toEqual([
        ...keys.map((_, i) => `image ${i}`),
        null,
        null,
        "image 7",
      ]);
      expect(got[7]).not.toBe(got.at(-1));
      got[7]!.fill(0);
      expect(new TextDecoder().decode(got.at(-1)!)).toBe("image 7");
      // Nothing is remembered between statements: a get after a put reads the new bytes.
      await store.put("screenshots/0.png", text("image 0, taken again"));
      const [again, stream] = await Promise.all([
        store.get("screenshots/0.png"),
        store.stream("screenshots/1.png"),
      ]);
      expect(new TextDecoder().decode(again!)).toBe("image 0, taken again");
      expect(await new Response(stream).text()).toBe("image 1");
      await db.delete(blobs).where(sql`${blobs.namespace} in ('ns-batched', 'ns-batched-other')`);
    });

    it("moves natively: the bytes never leave the database", async () => {
      const store = createPostgresObjectStore({ db: backend.connection().db, namespace: "ns-move" });
      expect(store.capabilities).toMatchObject({
        nativeMove: true,
        nativeTouch: true,
        atomicCreateOnly: true,
        contentType: true,
      });
      await store.put("a", text("x"), { contentType: "text/plain" });
      await store.move("a", "b");
      expect(await store.head("b")).toMatchObject({ size: 1, contentType: "text/plain" });
      await store.delete("b");
    });

    it("rejects an object over maxObjectBytes with TOO_LARGE, and bad options at construction", async () => {
      const store = createPostgresObjectStore({
        db: backend.connection().db,
        namespace: "ns-small",
        maxObjectBytes: 10,
      });
      await expectStowageError(store.put("big", new Uint8Array(11)), "TOO_LARGE");
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(8));
          controller.enqueue(new Uint8Array(8));
          controller.close();
        },
      });
      await expectStowageError(store.put("big", stream), "TOO_LARGE");
      expect(await store.head("big")).toBeNull();
      const db = backend.connection().db;
      for (const options of [
        { namespace: "" },
        { namespace: "a/b" },
        { namespace: "a\u0000" },
        { maxObjectBytes: 0 },
        { maxObjectBytes: MAX_OBJECT_BYTES_LIMIT + 1 },
      ]) {
        await expectStowageError(() => createPostgresObjectStore({ db, ...options }), "INVALID_INPUT");
      }
    });

    it("rejects a forged cursor", async () => {
      const store = createPostgresObjectStore({ db: backend.connection().db, namespace: "ns-cursor" });
      for (const cursor of ["not base64url!", "%%%"]) {
        await expectStowageError(store.list({ cursor }), "INVALID_INPUT");
      }
      // "YQ" decodes to "a": a valid position, not an error.
      expect(await store.list({ cursor: "YQ" })).toEqual({ items: [], cursor: undefined });
    });

    it("sorts keys in byte order whatever the database's default collation", async () => {
      const { db } = backend.connection();
      const rows = await db.execute(
        sql`SELECT collation_name FROM information_schema.columns WHERE table_name = 'blobs' AND column_name = 'key' AND table_schema = current_schema()`,
      );
      expect((rows as unknown as { rows: { collation_name: string }[] }).rows[0]?.collation_name).toBe("C");
    });
  });
});

describe("postgres object store errors", () => {
  // A database whose every call fails as node-postgres does when the server goes away.
  const lost = Object.assign(new Error("terminating connection due to administrator command"), {
    code: "57P01",
  });
  const gone = Object.assign(new Error("connection terminated unexpectedly"), { code: "08006" });
  const failingDb = (err: Error) =>
    new Proxy(
      {},
      {
        get: () => () => {
          throw err;
        },
      },
    ) as never;

  it("maps every method's driver error through fromDatabaseError, once, in defineObjectStore", async () => {
    for (const [err, code, reason] of [
      [gone, "UNAVAILABLE", "08006"],
      [lost, "UNAVAILABLE", "57P01"],
    ] as const) {
      const store = createPostgresObjectStore({ db: failingDb(err) });
      const operations: [string, () => Promise<unknown>][] = [
        ["put", () => store.put("k", text("x"))],
        ["create-only put", () => store.put("k", text("x"), { ifNoneMatch: "*" })],
        ["get", () => store.get("k")],
        ["stream", () => store.stream("k")],
        ["head", () => store.head("k")],
        ["delete", () => store.delete("k")],
        ["list", () => store.list({ prefix: "a/" })],
        ["move", () => store.move("k", "l")],
        ["touch", () => store.touch("k")],
      ];
      for (const [name, operation] of operations) {
        const error = await expectStowageError(operation, code, reason);
        expect({ name, cause: error.cause }).toEqual({ name, cause: err });
      }
    }
  });

  it.each([
    ["no options", undefined],
    ["no db", {}],
    ["a db given positionally, as before the options object", { select: 1 }],
  ])("refuses %s with INVALID_INPUT", async (_why, options) => {
    await expectStowageError(() => createPostgresObjectStore(options as never), "INVALID_INPUT");
  });
});
