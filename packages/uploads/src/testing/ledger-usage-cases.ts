// `artifacts` in the keys below is the design document's wire name (the upload key layout
// `sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`).
import { StowageError } from "@stowage/core";
import { expectStowageError, loadVitest } from "@stowage/core/testing";
import type { QuotaUsageSource } from "../quota-ledger.js";
import { bytes, hoursFromNow, type LedgerFixture } from "./ledger-fixture.js";

const { describe, expect, it } = await loadVitest("@stowage/uploads/testing");

/** Usage, and a scope's first listing: once, past 1,000 keys, only what is under the scope. */
export function describeUsage(t: LedgerFixture): void {
  describe("usage and the first listing", () => {
    it("lists the scope on first use, past 1,000 keys, and counts only what is under it", async () => {
      for (let i = 0; i < 1500; i++) await t.store.put(t.key(`f-${i}.log`), bytes(10));
      await t.store.put(`${t.scope}session.json`, bytes(7));
      await t.store.put(`${t.owner}s10/artifacts/other.log`, bytes(1000));
      await t.store.put(`${t.owner.slice(0, -1)}0/s1/artifacts/other.log`, bytes(1000));
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 15_007,
        pendingBytes: 0,
        totalBytes: 15_007,
        objects: 1501,
        pendingUploads: 0,
      });
    });

    it("lists once: an object written behind its back is seen through reconcile", async () => {
      await t.store.put(t.key("a.log"), bytes(30));
      expect((await t.ledger.usage(t.scope, t.source)).usedBytes).toBe(30);
      await t.store.put(t.key("b.log"), bytes(30));
      expect((await t.ledger.usage(t.scope, t.source)).usedBytes).toBe(30);
      await t.ledger.reconcile(
        t.scope,
        t.listing(
          [
            ["a.log", 30],
            ["b.log", 30],
          ],
          new Date(),
        ),
      );
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ usedBytes: 60, objects: 2 });
      expect(t.source.lists).toBe(1);
    });

    it("a reconcile on a scope never used is its first listing; a repeated key counts once", async () => {
      const unlisted: QuotaUsageSource = {
        // biome-ignore lint/correctness/useYield: a source that must not be listed
        async *list() {
          throw new Error("listed although reconciled");
        },
        head: async () => null,
      };
      await t.ledger.reconcile(
        t.scope,
        t.listing(
          [
            ["a", 10],
            ["b", 20],
            ["a", 15],
          ],
          new Date(),
        ),
      );
      expect(await t.ledger.usage(t.scope, unlisted)).toEqual({
        usedBytes: 35,
        pendingBytes: 0,
        totalBytes: 35,
        objects: 2,
        pendingUploads: 0,
      });
      await t.ledger.reconcile(t.scope, t.listing([], hoursFromNow(1)));
      expect(await t.ledger.usage(t.scope, unlisted)).toMatchObject({ usedBytes: 0, objects: 0 });
    });

    it("keeps scopes apart", async () => {
      await t.ledger.reserve(t.request("x.png", 1000));
      const other = `${t.owner}s2/`;
      const granted = await t.ledger.reserve({
        ...t.request("x.png", 1000),
        scope: other,
        key: `${other}x.png`,
      });
      expect(granted.usage.totalBytes).toBe(1000);
      await expectStowageError(t.ledger.reserve(t.request("y.png", 1)), "QUOTA_EXCEEDED");
    });

    it("a failing listing fails the request and leaves the ledger usable", async () => {
      let fail = true;
      const flaky: QuotaUsageSource = {
        list(prefix, listOptions) {
          if (fail) throw new StowageError("UNAVAILABLE", "listing failed");
          return t.source.list(prefix, listOptions);
        },
        head: (k, headOptions) => t.source.head(k, headOptions),
      };
      await expectStowageError(t.ledger.reserve({ ...t.request("a.png", 10), source: flaky }), "UNAVAILABLE");
      fail = false;
      expect((await t.ledger.reserve({ ...t.request("a.png", 10), source: flaky })).usage.totalBytes).toBe(
        10,
      );
    });
  });
}

/** Reserving within and over a limit, a key's size replacing what it holds, release, concurrency. */
export function describeReserve(t: LedgerFixture): void {
  describe("reserve and release", () => {
    it("reserves within the limit, exactly up to it, and refuses past it with the numbers", async () => {
      await t.store.put(t.key("old.bin"), bytes(300));
      expect((await t.ledger.reserve(t.request("new.bin", 500))).usage).toEqual({
        usedBytes: 300,
        pendingBytes: 500,
        totalBytes: 800,
        objects: 1,
        pendingUploads: 1,
      });
      const refused = await expectStowageError(
        t.ledger.reserve(t.request("more.bin", 300)),
        "QUOTA_EXCEEDED",
        "SESSION_QUOTA_EXCEEDED",
      );
      expect(refused.details).toEqual({
        limitBytes: 1000,
        usedBytes: 300,
        pendingBytes: 500,
        requestedBytes: 300,
      });
      expect((await t.ledger.reserve(t.request("fits.bin", 200))).usage.totalBytes).toBe(1000);
      await expectStowageError(t.ledger.reserve(t.request("one.bin", 1)), "QUOTA_EXCEEDED");
    });

    it("a key's new size replaces what it holds or has reserved, never adds to it", async () => {
      await t.store.put(t.key("shot.png"), bytes(60));
      // 60 → 90 grows the total by 30, not by 90.
      expect((await t.ledger.reserve(t.request("shot.png", 90, 100))).usage.totalBytes).toBe(90);
      // Shrinking counts the larger size until the upload is seen: the old object is still there.
      expect((await t.ledger.reserve(t.request("shot.png", 10, 100))).usage).toMatchObject({
        totalBytes: 90,
        pendingUploads: 1,
      });
      await expectStowageError(t.ledger.reserve(t.request("new.png", 11, 100)), "QUOTA_EXCEEDED");
      expect((await t.ledger.reserve(t.request("new.png", 10, 100))).usage.totalBytes).toBe(100);
    });

    it("a second URL for a key merges into one reservation; its release gives nothing back", async () => {
      await t.store.put(t.key("same.bin"), bytes(300));
      expect((await t.ledger.reserve(t.request("same.bin", 400, 400))).usage).toMatchObject({
        usedBytes: 300,
        pendingBytes: 100,
        totalBytes: 400,
      });
      const second = await t.ledger.reserve(t.request("same.bin", 350, 400));
      expect(second.usage).toMatchObject({ totalBytes: 400, pendingUploads: 1 });
      await second.release();
      expect((await t.ledger.usage(t.scope, t.source)).pendingBytes).toBe(100);
    });

    it("release gives back a single URL's reservation, once", async () => {
      const reservation = await t.ledger.reserve(t.request("a.png", 1000));
      await expectStowageError(t.ledger.reserve(t.request("b.png", 1)), "QUOTA_EXCEEDED");
      await reservation.release();
      await reservation.release();
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ totalBytes: 0, pendingUploads: 0 });
      await t.ledger.reserve(t.request("b.png", 1000));
    });

    it("20 concurrent reservations against one limit: exactly the ones that fit are granted", async () => {
      await t.store.put(t.key("base.bin"), bytes(500));
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => t.ledger.reserve(t.request(`f-${i}.png`, 60))),
      );
      // (1000 - 500) / 60: eight fit, a ninth never does.
      expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(8);
      for (const result of results) {
        if (result.status === "rejected") expect(StowageError.is(result.reason, "QUOTA_EXCEEDED")).toBe(true);
      }
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 500,
        pendingBytes: 480,
        totalBytes: 980,
        objects: 1,
        pendingUploads: 8,
      });
    });

    it("20 concurrent reservations for one key count once: only one object can end up there", async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => t.ledger.reserve(t.request("same.mp4", 80, 100))),
      );
      expect(results.every((result) => result.status === "fulfilled")).toBe(true);
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ totalBytes: 80, pendingUploads: 1 });
    });

    it("an aborted signal stops a reservation", async () => {
      const controller = new AbortController();
      controller.abort();
      await expectStowageError(
        t.ledger.reserve(t.request("a.png", 1), { signal: controller.signal }),
        "ABORTED",
      );
    });
  });
}

/** Expired reservations and landed uploads, settled by HEADs through the source. */
export function describeExpiry(t: LedgerFixture): void {
  describe("expiry and landed uploads, settled through the source", () => {
    it("holds a reservation while its URL is valid", async () => {
      await t.ledger.reserve(t.request("never-uploaded.png", 900));
      await expectStowageError(t.ledger.reserve(t.request("b.png", 200)), "QUOTA_EXCEEDED");
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ pendingBytes: 900, pendingUploads: 1 });
    });

    it("an expired reservation is settled by one HEAD: what the key holds then counts, nothing more", async () => {
      await t.ledger.reserve(t.expiredRequest("landed.bin", 500));
      await t.store.put(t.key("landed.bin"), bytes(120));
      // Each call settles what expired before it: landed.bin when never.bin is reserved, never.bin
      // when usage is asked.
      await t.ledger.reserve(t.expiredRequest("never.bin", 400));
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 120,
        pendingBytes: 0,
        totalBytes: 120,
        objects: 1,
        pendingUploads: 0,
      });
      expect(t.source.heads).toBe(2);
      // Settled reservations free their room for the next one.
      await t.ledger.reserve(t.expiredRequest("again.bin", 700));
      await t.store.put(t.key("again.bin"), bytes(10));
      expect((await t.ledger.reserve(t.request("big.bin", 870))).usage.totalBytes).toBe(1000);
    });

    it("near the limit, a HEAD counts uploads that already landed as objects", async () => {
      await t.ledger.reserve(t.request("landed.bin", 600));
      await t.store.put(t.key("landed.bin"), bytes(600));
      await expectStowageError(t.ledger.reserve(t.request("next.bin", 500)), "QUOTA_EXCEEDED");
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 600,
        pendingBytes: 0,
        totalBytes: 600,
        objects: 1,
        pendingUploads: 0,
      });
    });

    it("near the limit, a smaller re-upload that landed frees what the old object held", async () => {
      await t.store.put(t.key("video.mp4"), bytes(80));
      await t.ledger.reserve(t.request("video.mp4", 20, 100));
      await t.store.put(t.key("video.mp4"), bytes(20));
      expect((await t.ledger.reserve(t.request("new.png", 50, 100))).usage.totalBytes).toBe(70);
    });
  });
}
