import { randomBytes } from "node:crypto";
import { expectStowageError } from "@stowage/core/testing";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { rowsOf } from "../src/database.js";
import { createPostgresObjectStore } from "../src/object-store.js";
import { describeBackends } from "./backends.js";

// bytea parameters and results, through each driver's codec (on PGlite, connectEmbedded's hex
// codec in place of PGlite's own). The values are written out by hand; results compared as bytes.
const values: [string, number[]][] = [
  ["no bytes", []],
  ["a NUL", [0x00]],
  ["every kind of byte: NUL, high bit, DEL, backslash, `x`", [0x00, 0xff, 0x80, 0x7f, 0x5c, 0x78, 0x0a]],
  ["a UTF-8 character's bytes", [0xc3, 0xa9]],
];

describeBackends("bytea through the driver", (backend) => {
  const roundTrip = async (bytes: Uint8Array): Promise<Uint8Array> => {
    const rows = rowsOf(await backend.connection().db.execute(sql`SELECT ${bytes}::bytea AS b`));
    return rows[0]!.b as Uint8Array;
  };

  for (const [name, bytes] of values) {
    it(`comes back byte for byte: ${name}`, async () => {
      const back = await roundTrip(Uint8Array.from(bytes));
      expect(back).toBeInstanceOf(Uint8Array);
      expect([...back]).toEqual(bytes);
    });
  }

  it("reads PostgreSQL's own hex text of a literal", async () => {
    const rows = rowsOf(await backend.connection().db.execute(sql`SELECT '\\x00ff5c'::bytea AS b`));
    expect([...(rows[0]!.b as Uint8Array)]).toEqual([0x00, 0xff, 0x5c]);
  });

  it("comes back whole at 1 MiB, and sizes as PostgreSQL counts them", async () => {
    const bytes = randomBytes(1 << 20);
    const rows = rowsOf(
      await backend.connection().db.execute(sql`SELECT ${bytes}::bytea AS b, length(${bytes}::bytea) AS n`),
    );
    expect(Number(rows[0]!.n)).toBe(bytes.byteLength);
    expect(Buffer.compare(Buffer.from(rows[0]!.b as Uint8Array), bytes)).toBe(0);
  });

  it("gives a small value in bytes of its own, not a view of a shared pool", async () => {
    if (backend.name !== "PGlite") return; // node-postgres's Buffers are its own affair
    const back = await roundTrip(Uint8Array.from([1, 2, 3]));
    expect(back.byteOffset).toBe(0);
    expect(back.buffer.byteLength).toBe(3);
  });

  it("refuses a bytea parameter that is not bytes (INTERNAL NOT_BYTES), rather than storing its text", async () => {
    if (backend.name !== "PGlite") return; // node-postgres turns a string into its own bytea text
    const rejected = await backend
      .connection()
      .db.execute(sql`SELECT ${"\\x00ff"}::bytea AS b`)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    const cause = (rejected as { cause?: unknown } | undefined)?.cause;
    expect(cause).toMatchObject({ code: "INTERNAL", reason: "NOT_BYTES" });
  });

  it("refuses a stored object read back in bytea's escape form (INTEGRITY), rather than bytes misread", async () => {
    if (backend.name !== "PGlite") return; // node-postgres reads both forms itself
    const { db } = backend.connection();
    const store = createPostgresObjectStore({ db });
    await store.put("bytea/escape", Uint8Array.from([0x00, 0xff]));
    await db.execute(sql`SET bytea_output = 'escape'`);
    try {
      const refused = await expectStowageError(store.get("bytea/escape"), "INTEGRITY");
      expect(refused.reason).toBe("BYTEA_NOT_HEX");
    } finally {
      await db.execute(sql`RESET bytea_output`);
    }
    expect([...((await store.get("bytea/escape")) ?? [])]).toEqual([0x00, 0xff]);
  });
});
