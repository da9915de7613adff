import { loadVitest, seededRandom } from "@stowage/core/testing";
import type { QuotaReservation } from "../quota-ledger.js";
import { hoursFromNow, type LedgerFixture } from "./ledger-fixture.js";

const { expect, it } = await loadVitest("@stowage/uploads/testing");

/** A seeded random sequence of every change, its usage checked against a model after each step. */
export function describeModelCheck(t: LedgerFixture): void {
  it("keeps its totals true through any sequence of reserve, release, commit, forget and reconcile", async () => {
    // The model: what each key's object holds, and each key's reservation (the largest size asked
    // for, and how many URLs stand for it; commits and forgets leave it, as its URLs are valid);
    // usage recomputed from it after every step. Listings
    // start an hour apart in the future, so each replaces every record before it; a stale one
    // (started before the last) changes nothing.
    const random = seededRandom(20_261_123);
    const objects = new Map<string, number>();
    const reserved = new Map<string, { bytes: number; holders: number }>();
    const releases: {
      key: string;
      release: QuotaReservation["release"];
      entry: { bytes: number; holders: number } | undefined;
    }[] = [];
    const pick = () => t.key(`f-${Math.floor(random() * 6)}.log`);
    const size = () => Math.floor(random() * 40);
    let listings = 0;
    await t.ledger.usage(t.scope, t.source);
    for (let step = 0; step < 400; step++) {
      const roll = random();
      const k = pick();
      if (roll < 0.4) {
        const wanted = size();
        const reservation = await t.ledger.reserve({
          ...t.request("x", wanted, Number.MAX_SAFE_INTEGER),
          key: k,
        });
        const previous = reserved.get(k);
        if (previous) {
          previous.bytes = Math.max(previous.bytes, wanted);
          previous.holders++;
          releases.push({ key: k, release: reservation.release, entry: undefined });
        } else if (wanted > 0) {
          const entry = { bytes: wanted, holders: 1 };
          reserved.set(k, entry);
          releases.push({ key: k, release: reservation.release, entry });
        }
      } else if (roll < 0.5 && releases.length > 0) {
        const [{ key: released, release, entry }] = releases.splice(
          Math.floor(random() * releases.length),
          1,
        ) as [(typeof releases)[number]];
        await release();
        if (entry && reserved.get(released) === entry && entry.holders === 1) reserved.delete(released);
      } else if (roll < 0.7) {
        const landed = size();
        await t.ledger.commit({ scope: t.scope, key: k, size: landed });
        objects.set(k, landed);
      } else if (roll < 0.85) {
        await t.ledger.forget(t.scope, k);
        objects.delete(k);
      } else if (roll < 0.95) {
        const listed = [pick(), pick()].map((listedKey) => ({ key: listedKey, size: size() }));
        await t.ledger.reconcile(t.scope, { objects: listed, listedAt: hoursFromNow(++listings) });
        objects.clear();
        for (const object of listed) objects.set(object.key, object.size);
      } else if (listings > 0) {
        const stale = [{ key: pick(), size: size() }];
        await t.ledger.reconcile(t.scope, { objects: stale, listedAt: hoursFromNow(listings - 0.5) });
      }
      const usedBytes = [...objects.values()].reduce((sum, held) => sum + held, 0);
      let pendingBytes = 0;
      let pendingUploads = 0;
      for (const [reservedKey, entry] of reserved) {
        const beyond = Math.max(0, entry.bytes - (objects.get(reservedKey) ?? 0));
        pendingBytes += beyond;
        if (beyond > 0) pendingUploads++;
      }
      expect({ step, ...(await t.ledger.usage(t.scope, t.source)) }).toEqual({
        step,
        usedBytes,
        pendingBytes,
        totalBytes: usedBytes + pendingBytes,
        objects: objects.size,
        pendingUploads,
      });
    }
  }, 120_000);
}
