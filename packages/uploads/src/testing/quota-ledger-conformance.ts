// `artifacts` in the keys below is the design document's wire name (the upload key layout
// `sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`).
import { randomUUID } from "node:crypto";
import { createMemoryObjectStore, type ObjectStore, StowageError } from "@stowage/core";
import {
  expectStowageError,
  HOSTILE_KEYS,
  HOSTILE_PREFIXES,
  loadVitest,
  seededRandom,
} from "@stowage/core/testing";
import type {
  QuotaLedger,
  QuotaListing,
  QuotaReservation,
  QuotaReservationRequest,
  QuotaUsageSource,
} from "../quota-ledger.js";
import { type CountingSource, countingSource } from "./counting-source.js";

const { beforeEach, describe, expect, it } = await loadVitest("@stowage/uploads/testing");
/** Options of {@link describeQuotaLedgerConformance}. */
export interface QuotaLedgerConformanceOptions {
  /** Suite title, e.g. `postgres quota ledger (PGlite)`. */
  name: string;
  /**
   * A ledger for one test. Each test uses a scope of its own, so ledgers may share a database.
   * The suite expects a reservation grace under a day (its expired URLs expired a day ago) and an
   * allowance for clock skew in `reconcile` under an hour (its later listings start an hour on).
   */
  createLedger(): QuotaLedger | Promise<QuotaLedger>;
  /** When set, the suite is skipped and this reason printed. */
  skip?: string;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const bytes = (size: number) => new Uint8Array(size).fill(7);
/** A listing that started `hours` from now: later than anything the ledger records in the test. */
const hoursFromNow = (hours: number) => new Date(Date.now() + hours * HOUR);

/**
 * The behaviour every uploads `QuotaLedger` must have, on the real clock: reserving within and
 * over a limit, a key's size replacing (never adding to) what it holds, release, commit, forget,
 * a reservation outliving commits and deletions while a URL for its key is valid, reconcile (including a commit that lands while a listing runs), expiry settled by a HEAD through
 * the source, usage, 20 concurrent reservations against one limit, and hostile input. A shared
 * ledger adds its own cross-process tests.
 */
export function describeQuotaLedgerConformance(options: QuotaLedgerConformanceOptions): void {
  if (options.skip) {
    console.warn(`[stowage] ${options.name} conformance skipped: ${options.skip}`);
    describe.skip(`${options.name} conformance (skipped: ${options.skip})`, () => {
      it("needs its backend", () => {});
    });
    return;
  }

  describe(`${options.name} conformance`, () => {
    let ledger: QuotaLedger;
    let store: ObjectStore;
    let source: CountingSource;
    let owner: string;
    let scope: string;
    const key = (name: string) => `${scope}artifacts/${name}`;
    /** A reservation of `size` bytes for `name`, its URL valid for an hour. */
    const request = (name: string, size: number, limitBytes = 1000): QuotaReservationRequest => ({
      scope,
      key: key(name),
      bytes: size,
      limitBytes,
      urlExpiresAt: hoursFromNow(1),
      source,
    });
    /** The same, its URL expired a day ago: settled by the ledger's next look at the scope. */
    const expiredRequest = (name: string, size: number): QuotaReservationRequest => ({
      ...request(name, size),
      urlExpiresAt: new Date(Date.now() - DAY),
    });
    const listing = (objects: [string, number][], listedAt: Date): QuotaListing => ({
      objects: objects.map(([name, size]) => ({ key: key(name), size })),
      listedAt,
    });

    beforeEach(async () => {
      ledger = await options.createLedger();
      store = createMemoryObjectStore();
      source = countingSource(store);
      owner = `sessions/user/conformance-${randomUUID()}/`;
      scope = `${owner}s1/`;
    });

    describe("usage and the first listing", () => {
      it("lists the scope on first use, past 1,000 keys, and counts only what is under it", async () => {
        for (let i = 0; i < 1500; i++) await store.put(key(`f-${i}.log`), bytes(10));
        await store.put(`${scope}session.json`, bytes(7));
        await store.put(`${owner}s10/artifacts/other.log`, bytes(1000));
        await store.put(`${owner.slice(0, -1)}0/s1/artifacts/other.log`, bytes(1000));
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 15_007,
          pendingBytes: 0,
          totalBytes: 15_007,
          objects: 1501,
          pendingUploads: 0,
        });
      });

      it("lists once: an object written behind its back is seen through reconcile", async () => {
        await store.put(key("a.log"), bytes(30));
        expect((await ledger.usage(scope, source)).usedBytes).toBe(30);
        await store.put(key("b.log"), bytes(30));
        expect((await ledger.usage(scope, source)).usedBytes).toBe(30);
        await ledger.reconcile(
          scope,
          listing(
            [
              ["a.log", 30],
              ["b.log", 30],
            ],
            new Date(),
          ),
        );
        expect(await ledger.usage(scope, source)).toMatchObject({ usedBytes: 60, objects: 2 });
        expect(source.lists).toBe(1);
      });

      it("a reconcile on a scope never used is its first listing; a repeated key counts once", async () => {
        const unlisted: QuotaUsageSource = {
          // biome-ignore lint/correctness/useYield: a source that must not be listed
          async *list() {
            throw new Error("listed although reconciled");
          },
          head: async () => null,
        };
        await ledger.reconcile(
          scope,
          listing(
            [
              ["a", 10],
              ["b", 20],
              ["a", 15],
            ],
            new Date(),
          ),
        );
        expect(await ledger.usage(scope, unlisted)).toEqual({
          usedBytes: 35,
          pendingBytes: 0,
          totalBytes: 35,
          objects: 2,
          pendingUploads: 0,
        });
        await ledger.reconcile(scope, listing([], hoursFromNow(1)));
        expect(await ledger.usage(scope, unlisted)).toMatchObject({ usedBytes: 0, objects: 0 });
      });

      it("keeps scopes apart", async () => {
        await ledger.reserve(request("x.png", 1000));
        const other = `${owner}s2/`;
        const granted = await ledger.reserve({
          ...request("x.png", 1000),
          scope: other,
          key: `${other}x.png`,
        });
        expect(granted.usage.totalBytes).toBe(1000);
        await expectStowageError(ledger.reserve(request("y.png", 1)), "QUOTA_EXCEEDED");
      });

      it("a failing listing fails the request and leaves the ledger usable", async () => {
        let fail = true;
        const flaky: QuotaUsageSource = {
          list(prefix, listOptions) {
            if (fail) throw new StowageError("UNAVAILABLE", "listing failed");
            return source.list(prefix, listOptions);
          },
          head: (k, headOptions) => source.head(k, headOptions),
        };
        await expectStowageError(ledger.reserve({ ...request("a.png", 10), source: flaky }), "UNAVAILABLE");
        fail = false;
        expect((await ledger.reserve({ ...request("a.png", 10), source: flaky })).usage.totalBytes).toBe(10);
      });
    });

    describe("reserve and release", () => {
      it("reserves within the limit, exactly up to it, and refuses past it with the numbers", async () => {
        await store.put(key("old.bin"), bytes(300));
        expect((await ledger.reserve(request("new.bin", 500))).usage).toEqual({
          usedBytes: 300,
          pendingBytes: 500,
          totalBytes: 800,
          objects: 1,
          pendingUploads: 1,
        });
        const refused = await expectStowageError(
          ledger.reserve(request("more.bin", 300)),
          "QUOTA_EXCEEDED",
          "SESSION_QUOTA_EXCEEDED",
        );
        expect(refused.details).toEqual({
          limitBytes: 1000,
          usedBytes: 300,
          pendingBytes: 500,
          requestedBytes: 300,
        });
        expect((await ledger.reserve(request("fits.bin", 200))).usage.totalBytes).toBe(1000);
        await expectStowageError(ledger.reserve(request("one.bin", 1)), "QUOTA_EXCEEDED");
      });

      it("a key's new size replaces what it holds or has reserved, never adds to it", async () => {
        await store.put(key("shot.png"), bytes(60));
        // 60 → 90 grows the total by 30, not by 90.
        expect((await ledger.reserve(request("shot.png", 90, 100))).usage.totalBytes).toBe(90);
        // Shrinking counts the larger size until the upload is seen: the old object is still there.
        expect((await ledger.reserve(request("shot.png", 10, 100))).usage).toMatchObject({
          totalBytes: 90,
          pendingUploads: 1,
        });
        await expectStowageError(ledger.reserve(request("new.png", 11, 100)), "QUOTA_EXCEEDED");
        expect((await ledger.reserve(request("new.png", 10, 100))).usage.totalBytes).toBe(100);
      });

      it("a second URL for a key merges into one reservation; its release gives nothing back", async () => {
        await store.put(key("same.bin"), bytes(300));
        expect((await ledger.reserve(request("same.bin", 400, 400))).usage).toMatchObject({
          usedBytes: 300,
          pendingBytes: 100,
          totalBytes: 400,
        });
        const second = await ledger.reserve(request("same.bin", 350, 400));
        expect(second.usage).toMatchObject({ totalBytes: 400, pendingUploads: 1 });
        await second.release();
        expect((await ledger.usage(scope, source)).pendingBytes).toBe(100);
      });

      it("release gives back a single URL's reservation, once", async () => {
        const reservation = await ledger.reserve(request("a.png", 1000));
        await expectStowageError(ledger.reserve(request("b.png", 1)), "QUOTA_EXCEEDED");
        await reservation.release();
        await reservation.release();
        expect(await ledger.usage(scope, source)).toMatchObject({ totalBytes: 0, pendingUploads: 0 });
        await ledger.reserve(request("b.png", 1000));
      });

      it("20 concurrent reservations against one limit: exactly the ones that fit are granted", async () => {
        await store.put(key("base.bin"), bytes(500));
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) => ledger.reserve(request(`f-${i}.png`, 60))),
        );
        // (1000 - 500) / 60: eight fit, a ninth never does.
        expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(8);
        for (const result of results) {
          if (result.status === "rejected")
            expect(StowageError.is(result.reason, "QUOTA_EXCEEDED")).toBe(true);
        }
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 500,
          pendingBytes: 480,
          totalBytes: 980,
          objects: 1,
          pendingUploads: 8,
        });
      });

      it("20 concurrent reservations for one key count once: only one object can end up there", async () => {
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, () => ledger.reserve(request("same.mp4", 80, 100))),
        );
        expect(results.every((result) => result.status === "fulfilled")).toBe(true);
        expect(await ledger.usage(scope, source)).toMatchObject({ totalBytes: 80, pendingUploads: 1 });
      });

      it("an aborted signal stops a reservation", async () => {
        const controller = new AbortController();
        controller.abort();
        await expectStowageError(
          ledger.reserve(request("a.png", 1), { signal: controller.signal }),
          "ABORTED",
        );
      });
    });

    describe("expiry and landed uploads, settled through the source", () => {
      it("holds a reservation while its URL is valid", async () => {
        await ledger.reserve(request("never-uploaded.png", 900));
        await expectStowageError(ledger.reserve(request("b.png", 200)), "QUOTA_EXCEEDED");
        expect(await ledger.usage(scope, source)).toMatchObject({ pendingBytes: 900, pendingUploads: 1 });
      });

      it("an expired reservation is settled by one HEAD: what the key holds then counts, nothing more", async () => {
        await ledger.reserve(expiredRequest("landed.bin", 500));
        await store.put(key("landed.bin"), bytes(120));
        // Each call settles what expired before it: landed.bin when never.bin is reserved, never.bin
        // when usage is asked.
        await ledger.reserve(expiredRequest("never.bin", 400));
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 120,
          pendingBytes: 0,
          totalBytes: 120,
          objects: 1,
          pendingUploads: 0,
        });
        expect(source.heads).toBe(2);
        // Settled reservations free their room for the next one.
        await ledger.reserve(expiredRequest("again.bin", 700));
        await store.put(key("again.bin"), bytes(10));
        expect((await ledger.reserve(request("big.bin", 870))).usage.totalBytes).toBe(1000);
      });

      it("near the limit, a HEAD counts uploads that already landed as objects", async () => {
        await ledger.reserve(request("landed.bin", 600));
        await store.put(key("landed.bin"), bytes(600));
        await expectStowageError(ledger.reserve(request("next.bin", 500)), "QUOTA_EXCEEDED");
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 600,
          pendingBytes: 0,
          totalBytes: 600,
          objects: 1,
          pendingUploads: 0,
        });
      });

      it("near the limit, a smaller re-upload that landed frees what the old object held", async () => {
        await store.put(key("video.mp4"), bytes(80));
        await ledger.reserve(request("video.mp4", 20, 100));
        await store.put(key("video.mp4"), bytes(20));
        expect((await ledger.reserve(request("new.png", 50, 100))).usage.totalBytes).toBe(70);
      });
    });

    describe("commit and forget", () => {
      it("commit counts a verified upload at once; the reservation holds only what is beyond it", async () => {
        await ledger.reserve(request("shot.png", 400));
        expect(await ledger.usage(scope, source)).toMatchObject({ usedBytes: 0, pendingBytes: 400 });
        await ledger.commit({ scope, key: key("shot.png"), size: 400 });
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 400,
          pendingBytes: 0,
          totalBytes: 400,
          objects: 1,
          pendingUploads: 0,
        });
        await ledger.reserve(request("other.png", 600));
        await expectStowageError(ledger.reserve(request("third.png", 1)), "QUOTA_EXCEEDED");
        // Something smaller landed: the URL for 400 bytes is still valid, so 400 stay counted.
        await ledger.commit({ scope, key: key("shot.png"), size: 100 });
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 100,
          pendingBytes: 900,
          totalBytes: 1000,
          objects: 1,
          pendingUploads: 2,
        });
        await expectStowageError(ledger.reserve(request("third.png", 1)), "QUOTA_EXCEEDED");
      });

      it("forget frees what a key held, and keeps a reservation whose URL may still be used", async () => {
        await store.put(key("old.log"), bytes(700));
        await ledger.reserve(request("new.log", 200));
        await ledger.forget(scope, key("old.log"));
        await ledger.forget(scope, key("new.log"));
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 0,
          pendingBytes: 200,
          totalBytes: 200,
          objects: 0,
          pendingUploads: 1,
        });
        await ledger.reserve(request("big.log", 800));
        await expectStowageError(ledger.reserve(request("more.log", 1)), "QUOTA_EXCEEDED");
      });

      it("a commit keeps room for a second, larger URL for the same key (audit: 150 B against 100)", async () => {
        // Two URLs for q.png, 10 and 60 bytes: one reservation of 60.
        await ledger.reserve(request("q.png", 10, 100));
        expect((await ledger.reserve(request("q.png", 60, 100))).usage).toEqual({
          usedBytes: 0,
          pendingBytes: 60,
          totalBytes: 60,
          objects: 0,
          pendingUploads: 1,
        });
        // The 10-byte upload lands and is committed; the 60-byte URL can still write 60.
        await store.put(key("q.png"), bytes(10));
        await ledger.commit({ scope, key: key("q.png"), size: 10 });
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 10,
          pendingBytes: 50,
          totalBytes: 60,
          objects: 1,
          pendingUploads: 1,
        });
        // 60 + 90 > 100: refused, where 150 bytes would have ended up stored.
        await expectStowageError(ledger.reserve(request("r.png", 90, 100)), "QUOTA_EXCEEDED");
        expect((await ledger.reserve(request("r.png", 40, 100))).usage.totalBytes).toBe(100);
        await store.put(key("r.png"), bytes(40));
        await ledger.commit({ scope, key: key("r.png"), size: 40 });
        await store.put(key("q.png"), bytes(60));
        await ledger.commit({ scope, key: key("q.png"), size: 60 });
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 100,
          pendingBytes: 0,
          totalBytes: 100,
          objects: 2,
          pendingUploads: 0,
        });
      });

      it("a deleted object's valid URL keeps its room (audit: swept, then uploaded again, 170 B against 100)", async () => {
        await ledger.reserve(request("a.png", 80, 100));
        await store.put(key("a.png"), bytes(80));
        await ledger.commit({ scope, key: key("a.png"), size: 80 });
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 80,
          pendingBytes: 0,
          totalBytes: 80,
          objects: 1,
          pendingUploads: 0,
        });
        // The retention sweep deletes a.png; its URL is still valid and may upload 80 bytes again.
        await store.delete(key("a.png"));
        await ledger.forget(scope, key("a.png"));
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 0,
          pendingBytes: 80,
          totalBytes: 80,
          objects: 0,
          pendingUploads: 1,
        });
        await expectStowageError(ledger.reserve(request("b.png", 90, 100)), "QUOTA_EXCEEDED");
        await store.put(key("a.png"), bytes(80));
        await ledger.commit({ scope, key: key("a.png"), size: 80 });
        expect((await ledger.reserve(request("b.png", 20, 100))).usage).toEqual({
          usedBytes: 80,
          pendingBytes: 20,
          totalBytes: 100,
          objects: 1,
          pendingUploads: 1,
        });
      });

      it("once every URL for a key has expired, its reservation ends: what the key holds counts", async () => {
        await ledger.reserve(expiredRequest("a.png", 80));
        await ledger.commit({ scope, key: key("a.png"), size: 80 });
        await ledger.forget(scope, key("a.png"));
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 0,
          pendingBytes: 0,
          totalBytes: 0,
          objects: 0,
          pendingUploads: 0,
        });
        expect((await ledger.reserve(request("b.png", 1000))).usage.totalBytes).toBe(1000);
      });

      it("commit and forget before a scope's first use do not replace its first listing", async () => {
        await store.put(key("x.bin"), bytes(70));
        await ledger.commit({ scope, key: key("x.bin"), size: 999 });
        await ledger.forget(scope, key("x.bin"));
        expect(await ledger.usage(scope, source)).toMatchObject({ usedBytes: 70, objects: 1 });
      });
    });

    describe("revoke", () => {
      it("ends every reservation of the scope at once, and counts the revocation; other scopes keep theirs", async () => {
        const other = `${owner}s2/`;
        const otherRequest = { ...request("o.png", 500), scope: other, key: `${other}artifacts/o.png` };
        await ledger.reserve(otherRequest);
        await ledger.reserve(request("a.png", 400));
        await ledger.reserve(request("b.png", 500));
        expect(await ledger.revocations(scope)).toBe(0);
        await ledger.revoke(scope);
        expect(await ledger.revocations(scope)).toBe(1);
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 0,
          pendingBytes: 0,
          totalBytes: 0,
          objects: 0,
          pendingUploads: 0,
        });
        // The room is free now, not when the revoked URLs expire.
        expect((await ledger.reserve(request("c.png", 1000))).usage.totalBytes).toBe(1000);
        expect(await ledger.usage(other, source)).toMatchObject({ pendingBytes: 500 });
        expect(await ledger.revocations(other)).toBe(0);
        await ledger.revoke(scope);
        expect(await ledger.revocations(scope)).toBe(2);
      });

      it("keeps what the keys hold: the objects are the deleter's to delete and reconcile", async () => {
        await store.put(key("kept.bin"), bytes(60));
        await ledger.reserve(request("a.png", 400));
        await ledger.revoke(scope);
        expect(await ledger.usage(scope, source)).toMatchObject({ usedBytes: 60, pendingBytes: 0 });
      });

      it("a release after the revocation leaves a newer reservation of its key alone; a scope never used has no revocation", async () => {
        const reservation = await ledger.reserve(request("a.png", 400));
        await ledger.revoke(scope);
        await ledger.reserve(request("a.png", 300));
        await reservation.release();
        expect(await ledger.usage(scope, source)).toMatchObject({ pendingBytes: 300, pendingUploads: 1 });
        expect(await ledger.revocations(`${owner}never-used/`)).toBe(0);
      });
    });

    describe("reconcile", () => {
      beforeEach(async () => {
        await store.put(key("a.bin"), bytes(10));
        await store.put(key("c.bin"), bytes(5));
        expect((await ledger.usage(scope, source)).usedBytes).toBe(15);
      });

      it("a commit or forget that lands while a listing runs keeps what it said", async () => {
        const listedAt = new Date();
        // The listing reads a.bin (10 bytes) and c.bin; meanwhile another process overwrites
        // a.bin, uploads b.bin after the listing passed its place, and deletes c.bin.
        await ledger.commit({ scope, key: key("a.bin"), size: 70 });
        await ledger.commit({ scope, key: key("b.bin"), size: 30 });
        await ledger.forget(scope, key("c.bin"));
        await ledger.reconcile(
          scope,
          listing(
            [
              ["a.bin", 10],
              ["c.bin", 5],
            ],
            listedAt,
          ),
        );
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 100,
          pendingBytes: 0,
          totalBytes: 100,
          objects: 2,
          pendingUploads: 0,
        });
      });

      it("a listing that started after the ledger's records replaces them", async () => {
        await ledger.commit({ scope, key: key("a.bin"), size: 70 });
        await ledger.commit({ scope, key: key("b.bin"), size: 30 });
        await ledger.forget(scope, key("c.bin"));
        await ledger.reconcile(
          scope,
          listing(
            [
              ["a.bin", 10],
              ["c.bin", 5],
              ["d.bin", 1],
            ],
            hoursFromNow(1),
          ),
        );
        expect(await ledger.usage(scope, source)).toMatchObject({ usedBytes: 16, objects: 3 });
      });

      it("a listing that started before one already reconciled changes nothing", async () => {
        await ledger.reconcile(scope, listing([["a.bin", 1]], hoursFromNow(2)));
        await ledger.reconcile(
          scope,
          listing(
            [
              ["a.bin", 99],
              ["b.bin", 99],
            ],
            hoursFromNow(1),
          ),
        );
        expect(await ledger.usage(scope, source)).toMatchObject({ usedBytes: 1, objects: 1 });
      });

      it("leaves reservations as they are", async () => {
        await ledger.reserve(request("up.bin", 300));
        await ledger.reconcile(scope, listing([], hoursFromNow(1)));
        expect(await ledger.usage(scope, source)).toEqual({
          usedBytes: 0,
          pendingBytes: 300,
          totalBytes: 300,
          objects: 0,
          pendingUploads: 1,
        });
      });
    });

    describe("refuses hostile and malformed input, storing nothing", () => {
      /** The scope was never touched: its first use lists the (empty) store. */
      const expectUntouched = async () => {
        expect(await ledger.usage(scope, source)).toMatchObject({ totalBytes: 0, pendingUploads: 0 });
        expect(source.lists).toBe(1);
      };

      it.each(HOSTILE_KEYS.map(({ value, why }) => [why, value]))("key: %s", async (_why, value) => {
        // Under the scope where it is a string, so that only the key itself is at fault.
        const bad = (typeof value === "string" ? `${scope}${value}` : value) as string;
        await expectStowageError(ledger.reserve({ ...request("x", 1), key: bad }), "INVALID_INPUT");
        await expectStowageError(ledger.commit({ scope, key: bad, size: 1 }), "INVALID_INPUT");
        await expectStowageError(ledger.forget(scope, bad), "INVALID_INPUT");
        await expectStowageError(
          ledger.reconcile(scope, { objects: [{ key: bad, size: 1 }], listedAt: new Date() }),
          "INVALID_INPUT",
        );
        await expectUntouched();
      });

      it.each([...HOSTILE_PREFIXES, { value: "", why: "empty" }].map(({ value, why }) => [why, value]))(
        "scope: %s",
        async (_why, value) => {
          const bad = value as string;
          const inside = `${typeof value === "string" ? value : ""}artifacts/x.png`;
          await expectStowageError(
            ledger.reserve({ ...request("x", 1), scope: bad, key: inside }),
            "INVALID_INPUT",
          );
          await expectStowageError(ledger.commit({ scope: bad, key: inside, size: 1 }), "INVALID_INPUT");
          await expectStowageError(ledger.forget(bad, inside), "INVALID_INPUT");
          await expectStowageError(
            ledger.reconcile(bad, { objects: [], listedAt: new Date() }),
            "INVALID_INPUT",
          );
          await expectStowageError(ledger.usage(bad, source), "INVALID_INPUT");
          await expectStowageError(ledger.revoke(bad), "INVALID_INPUT");
          await expectStowageError(ledger.revocations(bad), "INVALID_INPUT");
        },
      );

      it("keys outside their scope, and the scope itself", async () => {
        for (const bad of [`${owner}s2/artifacts/x.png`, scope, "sessions/elsewhere/x.png"]) {
          await expectStowageError(ledger.reserve({ ...request("x", 1), key: bad }), "INVALID_INPUT");
          await expectStowageError(ledger.commit({ scope, key: bad, size: 1 }), "INVALID_INPUT");
          await expectStowageError(ledger.forget(scope, bad), "INVALID_INPUT");
          await expectStowageError(
            ledger.reconcile(scope, { objects: [{ key: bad, size: 1 }], listedAt: new Date() }),
            "INVALID_INPUT",
          );
        }
        await expectUntouched();
      });

      it("sizes that are not byte counts", async () => {
        for (const size of [
          -1,
          0.5,
          Number.NaN,
          Number.POSITIVE_INFINITY,
          Number.MAX_SAFE_INTEGER + 1,
          "5",
          null,
        ]) {
          const bad = size as number;
          await expectStowageError(ledger.reserve({ ...request("x", 1), bytes: bad }), "INVALID_INPUT");
          await expectStowageError(ledger.reserve({ ...request("x", 1), limitBytes: bad }), "INVALID_INPUT");
          await expectStowageError(ledger.commit({ scope, key: key("x"), size: bad }), "INVALID_INPUT");
          await expectStowageError(
            ledger.reconcile(scope, { objects: [{ key: key("x"), size: bad }], listedAt: new Date() }),
            "INVALID_INPUT",
          );
        }
        await expectUntouched();
      });

      it("dates that are not dates", async () => {
        for (const date of [new Date("nope"), "2030-01-01", Date.now(), null, undefined]) {
          const bad = date as Date;
          await expectStowageError(
            ledger.reserve({ ...request("x", 1), urlExpiresAt: bad }),
            "INVALID_INPUT",
          );
          await expectStowageError(ledger.reconcile(scope, { objects: [], listedAt: bad }), "INVALID_INPUT");
        }
        await expectUntouched();
      });

      it("requests, commits, listings and sources that are not objects", async () => {
        for (const bad of [null, undefined, "x", 42]) {
          await expectStowageError(
            ledger.reserve(bad as unknown as QuotaReservationRequest),
            "INVALID_INPUT",
          );
          await expectStowageError(ledger.commit(bad as never), "INVALID_INPUT");
          await expectStowageError(ledger.reconcile(scope, bad as unknown as QuotaListing), "INVALID_INPUT");
          await expectStowageError(
            ledger.reconcile(scope, { objects: [bad], listedAt: new Date() } as never),
            "INVALID_INPUT",
          );
          await expectStowageError(
            ledger.reserve({ ...request("x", 1), source: bad as never }),
            "INVALID_INPUT",
          );
          await expectStowageError(ledger.usage(scope, bad as never), "INVALID_INPUT");
        }
        await expectStowageError(
          ledger.reconcile(scope, { objects: 5, listedAt: new Date() } as unknown as QuotaListing),
          "INVALID_INPUT",
        );
        await expectStowageError(
          ledger.reserve({ ...request("x", 1), source: {} as never }),
          "INVALID_INPUT",
        );
        await expectUntouched();
      });
    });

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
      const pick = () => key(`f-${Math.floor(random() * 6)}.log`);
      const size = () => Math.floor(random() * 40);
      let listings = 0;
      await ledger.usage(scope, source);
      for (let step = 0; step < 400; step++) {
        const roll = random();
        const k = pick();
        if (roll < 0.4) {
          const wanted = size();
          const reservation = await ledger.reserve({
            ...request("x", wanted, Number.MAX_SAFE_INTEGER),
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
          await ledger.commit({ scope, key: k, size: landed });
          objects.set(k, landed);
        } else if (roll < 0.85) {
          await ledger.forget(scope, k);
          objects.delete(k);
        } else if (roll < 0.95) {
          const listed = [pick(), pick()].map((listedKey) => ({ key: listedKey, size: size() }));
          await ledger.reconcile(scope, { objects: listed, listedAt: hoursFromNow(++listings) });
          objects.clear();
          for (const object of listed) objects.set(object.key, object.size);
        } else if (listings > 0) {
          const stale = [{ key: pick(), size: size() }];
          await ledger.reconcile(scope, { objects: stale, listedAt: hoursFromNow(listings - 0.5) });
        }
        const usedBytes = [...objects.values()].reduce((sum, held) => sum + held, 0);
        let pendingBytes = 0;
        let pendingUploads = 0;
        for (const [reservedKey, entry] of reserved) {
          const beyond = Math.max(0, entry.bytes - (objects.get(reservedKey) ?? 0));
          pendingBytes += beyond;
          if (beyond > 0) pendingUploads++;
        }
        expect({ step, ...(await ledger.usage(scope, source)) }).toEqual({
          step,
          usedBytes,
          pendingBytes,
          totalBytes: usedBytes + pendingBytes,
          objects: objects.size,
          pendingUploads,
        });
      }
    }, 120_000);
  });
}
