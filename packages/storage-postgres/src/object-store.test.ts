import { StowageError } from "@stowage/core";
import { describeObjectStoreConformance } from "@stowage/core/testing";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { describeBackends } from "../test/backends.js";
import { createPostgresObjectStore, MAX_OBJECT_BYTES_LIMIT } from "./object-store.js";
import { blobs } from "./schema.js";

const text = (value: string) => new TextEncoder().encode(value);
const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "success",
    (err: unknown) => (StowageError.is(err) ? err.code : String(err)),
  );

describeBackends("postgres object store", (backend) => {
  describeObjectStoreConformance({
    name: `postgres object store on ${backend.name}`,
    createStore: (namespace) => createPostgresObjectStore(backend.connection().db, { namespace }),
    destroyStore: async (_store, namespace) => {
      await backend.connection().db.delete(blobs).where(eq(blobs.namespace, namespace));
    },
  });

  describe("specific to the table", () => {
    it("namespaces share the table but never a key", async () => {
      const { db } = backend.connection();
      const a = createPostgresObjectStore(db, { namespace: "ns-a" });
      const b = createPostgresObjectStore(db, { namespace: "ns-b" });
      await a.put("same/key", text("from a"));
      await b.put("same/key", text("from b"));
      expect(new TextDecoder().decode((await a.get("same/key"))!)).toBe("from a");
      expect((await b.list()).items.map((item) => item.key)).toEqual(["same/key"]);
      await a.delete("same/key");
      expect(await b.head("same/key")).not.toBeNull();
      await b.delete("same/key");
    });

    it("moves natively: the bytes never leave the database", async () => {
      const store = createPostgresObjectStore(backend.connection().db, { namespace: "ns-move" });
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
      const store = createPostgresObjectStore(backend.connection().db, {
        namespace: "ns-small",
        maxObjectBytes: 10,
      });
      expect(await codeOf(store.put("big", new Uint8Array(11)))).toBe("TOO_LARGE");
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(8));
          controller.enqueue(new Uint8Array(8));
          controller.close();
        },
      });
      expect(await codeOf(store.put("big", stream))).toBe("TOO_LARGE");
      expect(await store.head("big")).toBeNull();
      const db = backend.connection().db;
      for (const options of [
        { namespace: "" },
        { namespace: "a/b" },
        { namespace: "a\u0000" },
        { maxObjectBytes: 0 },
        { maxObjectBytes: MAX_OBJECT_BYTES_LIMIT + 1 },
      ]) {
        expect(() => createPostgresObjectStore(db, options)).toThrow(StowageError);
      }
    });

    it("rejects a forged cursor", async () => {
      const store = createPostgresObjectStore(backend.connection().db, { namespace: "ns-cursor" });
      for (const cursor of ["not base64url!", "YQ", "%%%"]) {
        const code = await codeOf(store.list({ cursor }));
        // "YQ" decodes to "a": a valid position, not an error.
        expect(code).toBe(cursor === "YQ" ? "success" : "INVALID_INPUT");
      }
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
