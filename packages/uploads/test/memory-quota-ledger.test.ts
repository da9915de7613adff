// `artifacts` in paths and keys below is the design document's wire name (the API paths and the
// S3 layout `sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`).
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { expectStowageError, seededRandom } from "@stowage/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { createMemoryQuotaLedger } from "../src/memory-quota-ledger.js";
import type { QuotaLedger, QuotaReservationRequest } from "../src/quota-ledger.js";
import { type CountingSource, countingSource } from "../src/testing/counting-source.js";
import { describeQuotaLedgerConformance } from "../src/testing/index.js";

/** The documented default: a reservation outlives its URL by 10 minutes. */
const RESERVATION_GRACE_MS = 10 * 60 * 1000;

const SCOPE = "sessions/user/u1/s1/";
const key = (name: string) => `${SCOPE}artifacts/${name}`;
const bytes = (size: number) => new Uint8Array(size);

describeQuotaLedgerConformance({
  name: "memory quota ledger",
  createLedger: () => createMemoryQuotaLedger(),
});

describe("memory quota ledger, on its own clock", () => {
  let store: ObjectStore;
  let source: CountingSource;
  let clock: number;
  let ledger: QuotaLedger;
  const urlExpiresAt = () => new Date(clock + 900_000);
  const request = (name: string, size: number, limitBytes = 100): QuotaReservationRequest => ({
    scope: SCOPE,
    key: key(name),
    bytes: size,
    limitBytes,
    urlExpiresAt: urlExpiresAt(),
    source,
  });

  beforeEach(() => {
    store = createMemoryObjectStore();
    source = countingSource(store);
    clock = 1_000_000_000_000;
    ledger = createMemoryQuotaLedger({ now: () => clock });
  });

  it("20 concurrent first uses list the prefix once", async () => {
    await store.put(key("base.bin"), bytes(500));
    await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => ledger.reserve(request(`f-${i}.png`, 60, 1000))),
    );
    expect(source.lists).toBe(1);
  });

  it("holds a reservation until its URL expires (plus the grace), then settles it with one HEAD", async () => {
    await ledger.reserve(request("never-uploaded.png", 90));
    await expectStowageError(ledger.reserve(request("b.png", 20)), "QUOTA_EXCEEDED");
    clock += 900_000 + RESERVATION_GRACE_MS - 1;
    await expectStowageError(ledger.reserve(request("b.png", 20)), "QUOTA_EXCEEDED");
    clock += 2;
    const heads = source.heads;
    await ledger.reserve(request("b.png", 20));
    expect(source.heads - heads).toBe(1);
    expect((await ledger.usage(SCOPE, source)).totalBytes).toBe(20);
  });

  it("per-request cost does not grow with the object count: one listing, no HEADs", async () => {
    await Promise.all(Array.from({ length: 5000 }, (_, i) => store.put(key(`f-${i}.log`), bytes(1))));
    for (let i = 0; i < 50; i++) await ledger.reserve(request(`new-${i % 5}.png`, 1, 1_000_000));
    expect(source.lists).toBe(1);
    expect(source.heads).toBe(0);
  });

  it("never refreshes on a timer: an hour later it still believes its own numbers", async () => {
    await store.put(key("a.log"), bytes(30));
    expect((await ledger.usage(SCOPE, source)).usedBytes).toBe(30);
    await store.put(key("b.log"), bytes(30));
    clock += 3_600_000;
    expect((await ledger.usage(SCOPE, source)).usedBytes).toBe(30);
    expect(source.lists).toBe(1);
  });

  it("reconcile: a change recorded in the millisecond a listing started outlives it, one before does not", async () => {
    await ledger.usage(SCOPE, source);
    clock += 10;
    await ledger.commit({ scope: SCOPE, key: key("before.log"), size: 40 });
    clock += 1;
    const listedAt = new Date(clock);
    await ledger.commit({ scope: SCOPE, key: key("same-ms.log"), size: 30 });
    await ledger.reconcile(SCOPE, { objects: [{ key: key("before.log"), size: 5 }], listedAt });
    expect(await ledger.usage(SCOPE, source)).toMatchObject({ usedBytes: 35, objects: 2 });
  });

  it("keeps sessions apart and drops idle ones first", async () => {
    ledger = createMemoryQuotaLedger({ now: () => clock, maxScopes: 2 });
    const other = (scope: string): QuotaReservationRequest => ({
      ...request("x.png", 100),
      scope,
      key: `${scope}artifacts/x.png`,
    });
    await ledger.reserve(other("sessions/user/u1/a/"));
    await ledger.usage("sessions/user/u1/b/", source);
    await ledger.usage("sessions/user/u1/c/", source);
    await ledger.usage("sessions/user/u1/d/", source);
    // Session a holds a reservation, so it was never dropped: it still refuses more.
    await ledger.reserve(other("sessions/user/u1/a/"));
    await expectStowageError(
      ledger.reserve({ ...other("sessions/user/u1/a/"), key: "sessions/user/u1/a/artifacts/y.png" }),
      "QUOTA_EXCEEDED",
    );
  });

  it("keeps a session whose committed upload's URL is valid, and may drop it once the URL expired", async () => {
    ledger = createMemoryQuotaLedger({ now: () => clock, maxScopes: 2 });
    await ledger.reserve(request("a.png", 80));
    await ledger.commit({ scope: SCOPE, key: key("a.png"), size: 80 });
    await ledger.usage("sessions/user/u1/b/", source);
    await ledger.usage("sessions/user/u1/c/", source);
    expect(await ledger.usage(SCOPE, source)).toMatchObject({ usedBytes: 80, pendingUploads: 0 });
    expect(source.lists).toBe(3);
    clock += 900_000 + RESERVATION_GRACE_MS;
    await ledger.usage("sessions/user/u1/d/", source);
    await ledger.usage("sessions/user/u1/e/", source);
    // Dropped: its next use lists it again, which finds nothing (a.png never reached the store).
    expect(await ledger.usage(SCOPE, source)).toMatchObject({ usedBytes: 0, pendingBytes: 0 });
    expect(source.lists).toBe(6);
  });

  it("rejects malformed options", async () => {
    for (const options of [
      { reservationGraceMs: -1 },
      { reservationGraceMs: Number.NaN },
      { maxScopes: 0 },
      { maxScopes: 1.5 },
    ]) {
      await expectStowageError(() => createMemoryQuotaLedger(options), "INVALID_INPUT");
    }
  });

  it("keeps its records true through any interleaving of changes and listings, old and new", async () => {
    // The model: what each key holds, when each key was last recorded (commit or forget), and when
    // the latest applied listing started. A listing keeps the keys recorded at or after its start,
    // and one older than the latest applied changes nothing. The clock moves 1 ms a step; listings
    // start anywhere from 6 ms ago to 3 ms ahead.
    const random = seededRandom(20_261_124);
    const objects = new Map<string, number>();
    const recordedAt = new Map<string, number>();
    const pick = () => key(`f-${Math.floor(random() * 6)}.log`);
    const size = () => Math.floor(random() * 40);
    let modelListedAt = clock;
    await ledger.usage(SCOPE, source);
    for (let step = 0; step < 2000; step++) {
      clock += 1;
      const roll = random();
      const k = pick();
      if (roll < 0.4) {
        const held = size();
        await ledger.commit({ scope: SCOPE, key: k, size: held });
        objects.set(k, held);
        recordedAt.set(k, clock);
      } else if (roll < 0.6) {
        await ledger.forget(SCOPE, k);
        objects.delete(k);
        recordedAt.set(k, clock);
      } else {
        const listedAt = clock + Math.floor(random() * 10) - 6;
        const listed = [pick(), pick()].map((listedKey) => ({ key: listedKey, size: size() }));
        await ledger.reconcile(SCOPE, { objects: listed, listedAt: new Date(listedAt) });
        if (listedAt >= modelListedAt) {
          const next = new Map(listed.map((object) => [object.key, object.size]));
          for (const [recordedKey, at] of recordedAt) {
            if (at < listedAt) recordedAt.delete(recordedKey);
            else if (objects.has(recordedKey)) next.set(recordedKey, objects.get(recordedKey)!);
            else next.delete(recordedKey);
          }
          objects.clear();
          for (const [listedKey, held] of next) objects.set(listedKey, held);
          modelListedAt = listedAt;
        }
      }
      const usedBytes = [...objects.values()].reduce((sum, held) => sum + held, 0);
      expect({ step, ...(await ledger.usage(SCOPE, source)) }).toEqual({
        step,
        usedBytes,
        pendingBytes: 0,
        totalBytes: usedBytes,
        objects: objects.size,
        pendingUploads: 0,
      });
    }
  });
});
