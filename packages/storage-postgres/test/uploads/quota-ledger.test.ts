import { randomUUID } from "node:crypto";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { spawnChild } from "@stowage/test-support";
import type { QuotaLedger, QuotaReservationRequest, QuotaUsageSource } from "@stowage/uploads";
import { usageSourceFromStore } from "@stowage/uploads";
import { describeQuotaLedgerConformance } from "@stowage/uploads/testing";
import { sql } from "drizzle-orm";
import { beforeEach, expect, it } from "vitest";
import { rowsOf } from "../../src/database.js";
import { createPostgresQuotaLedger } from "../../src/uploads/quota-ledger.js";
import { describeBackends } from "../backends.js";

const RESERVE_CHILD = new URL("../children/reserve-quota.ts", import.meta.url);
const HOUR = 3600_000;
const bytes = (n: number) => new Uint8Array(n).fill(7);

describeBackends("postgres quota ledger", (backend) => {
  describeQuotaLedgerConformance({
    name: "postgres quota ledger",
    createLedger: () => createPostgresQuotaLedger({ db: backend.connection().db }),
  });

  let store: ObjectStore;
  let source: QuotaUsageSource;
  let scope: string;
  let ledger: QuotaLedger;
  /** A reservation request for `name` under this test's scope, URL valid for an hour. */
  const request = (name: string, size: number, limitBytes: number): QuotaReservationRequest => ({
    scope,
    key: `${scope}${name}`,
    bytes: size,
    limitBytes,
    urlExpiresAt: new Date(Date.now() + HOUR),
    source,
  });

  beforeEach(() => {
    store = createMemoryObjectStore();
    source = usageSourceFromStore(store);
    scope = `sessions/user/alice/${randomUUID()}/`;
    ledger = createPostgresQuotaLedger({ db: backend.connection().db });
  });

  it("keeps nothing in the process: another ledger on the database sees a reservation at once", async () => {
    const other = createPostgresQuotaLedger({ db: backend.connection().db });
    await ledger.reserve(request("a.bin", 600, 1000));
    expect((await other.usage(scope, source)).pendingBytes).toBe(600);
    await expectStowageError(other.reserve(request("b.bin", 500, 1000)), "QUOTA_EXCEEDED");
  });

  it("20 concurrent reservations on two ledgers never grant more than the limit together", async () => {
    const second = createPostgresQuotaLedger({ db: backend.connection().db });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? ledger : second).reserve(request(`f${i}.bin`, 100 + i, 1000)),
      ),
    );
    const granted = results.flatMap((result, i) => (result.status === "fulfilled" ? [100 + i] : []));
    for (const result of results) {
      if (result.status === "rejected") expect(result.reason.code).toBe("QUOTA_EXCEEDED");
    }
    const total = granted.reduce((sum, size) => sum + size, 0);
    expect(total).toBeLessThanOrEqual(1000);
    expect(granted.length).toBeGreaterThanOrEqual(8);
    expect((await ledger.usage(scope, source)).pendingBytes).toBe(total);
  });

  it.skipIf(backend.name !== "PostgreSQL")(
    "20 concurrent reservations from two processes never grant more than the limit together",
    async () => {
      const child = spawnChild(RESERVE_CHILD, [backend.url!, backend.schema!, scope, "10", "150", "1000"], {
        stderr: "ignore",
      });
      let out = "";
      child.stdout!.setEncoding("utf8");
      const exited = new Promise((resolve) => child.on("exit", resolve));
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on("data", (chunk: string) => {
          out += chunk;
          if (out.includes("ready")) resolve();
        });
        child.on("exit", () => reject(new Error(`child exited before it was ready: ${out}`)));
      });
      child.kill("SIGUSR1");
      const mine = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => ledger.reserve(request(`parent-${i}.bin`, 150, 1000))),
      );
      await exited;
      const theirs = JSON.parse(out.slice(out.indexOf("{"))) as { granted: number[]; unexpected: string[] };
      expect(theirs.unexpected).toEqual([]);
      const grantedHere = mine.filter((result) => result.status === "fulfilled").length * 150;
      const total = grantedHere + theirs.granted.reduce((sum, size) => sum + size, 0);
      // 1000 / 150: six reservations fit, a seventh never does.
      expect(total).toBe(900);
      expect((await ledger.usage(scope, source)).pendingBytes).toBe(900);
    },
    60_000,
  );

  it("a commit through another ledger while a listing runs survives the listing", async () => {
    const other = createPostgresQuotaLedger({ db: backend.connection().db });
    await store.put(`${scope}a.bin`, bytes(10));
    expect((await ledger.usage(scope, source)).usedBytes).toBe(10);
    const listedAt = new Date();
    await other.commit({ scope, key: `${scope}b.bin`, size: 30 });
    await other.forget(scope, `${scope}a.bin`);
    await ledger.reconcile(scope, { objects: [{ key: `${scope}a.bin`, size: 10 }], listedAt });
    expect(await other.usage(scope, source)).toMatchObject({ usedBytes: 30, objects: 1 });
  });

  it("records are stamped by the database's clock and outlive listings that start up to 30 s later", async () => {
    await ledger.usage(scope, source);
    const [before] = rowsOf(await backend.connection().db.execute(sql`SELECT now() AS t`));
    await ledger.commit({ scope, key: `${scope}a.bin`, size: 40 });
    const [row] = rowsOf(
      await backend
        .connection()
        .db.execute(
          sql`SELECT changed_at FROM quota_objects WHERE scope = ${scope} AND key = ${`${scope}a.bin`}`,
        ),
    );
    expect(new Date(row!.changed_at as string).getTime()).toBeGreaterThanOrEqual(
      new Date(before!.t as string).getTime(),
    );
    // A listing whose clock reads 20 s later keeps the record; one a minute later replaces it.
    await ledger.reconcile(scope, { objects: [], listedAt: new Date(Date.now() + 20_000) });
    expect((await ledger.usage(scope, source)).usedBytes).toBe(40);
    await ledger.reconcile(scope, { objects: [], listedAt: new Date(Date.now() + 60_000) });
    expect((await ledger.usage(scope, source)).usedBytes).toBe(0);
  });

  it("a forgotten key's row stays until a later listing supersedes it", async () => {
    const countRows = async () =>
      rowsOf(
        await backend
          .connection()
          .db.execute(sql`SELECT count(*)::int AS n FROM quota_objects WHERE scope = ${scope}`),
      )[0]?.n;
    await store.put(`${scope}a.bin`, bytes(10));
    await ledger.usage(scope, source);
    await ledger.forget(scope, `${scope}a.bin`);
    expect(await countRows()).toBe(1);
    expect(await ledger.usage(scope, source)).toMatchObject({ usedBytes: 0, objects: 0 });
    await ledger.reconcile(scope, { objects: [], listedAt: new Date(Date.now() + HOUR) });
    expect(await countRows()).toBe(0);
  });

  it("refuses a negative or fractional reservationGraceMs", async () => {
    for (const reservationGraceMs of [-1, 0.5, Number.NaN]) {
      await expectStowageError(
        () => createPostgresQuotaLedger({ db: backend.connection().db, reservationGraceMs }),
        "INVALID_INPUT",
      );
    }
  });
});
