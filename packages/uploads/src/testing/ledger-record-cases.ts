// `artifacts` in the keys below is the design document's wire name (the upload key layout
// `sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`).
import { expectStowageError, loadVitest } from "@stowage/core/testing";
import { bytes, hoursFromNow, type LedgerFixture } from "./ledger-fixture.js";

const { beforeEach, describe, expect, it } = await loadVitest("@stowage/uploads/testing");

/** Commit and forget, and a reservation outliving them while a URL for its key is valid. */
export function describeCommitAndForget(t: LedgerFixture): void {
  describe("commit and forget", () => {
    it("commit counts a verified upload at once; the reservation holds only what is beyond it", async () => {
      await t.ledger.reserve(t.request("shot.png", 400));
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ usedBytes: 0, pendingBytes: 400 });
      await t.ledger.commit({ scope: t.scope, key: t.key("shot.png"), size: 400 });
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 400,
        pendingBytes: 0,
        totalBytes: 400,
        objects: 1,
        pendingUploads: 0,
      });
      await t.ledger.reserve(t.request("other.png", 600));
      await expectStowageError(t.ledger.reserve(t.request("third.png", 1)), "QUOTA_EXCEEDED");
      // Something smaller landed: the URL for 400 bytes is still valid, so 400 stay counted.
      await t.ledger.commit({ scope: t.scope, key: t.key("shot.png"), size: 100 });
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 100,
        pendingBytes: 900,
        totalBytes: 1000,
        objects: 1,
        pendingUploads: 2,
      });
      await expectStowageError(t.ledger.reserve(t.request("third.png", 1)), "QUOTA_EXCEEDED");
    });

    it("forget frees what a key held, and keeps a reservation whose URL may still be used", async () => {
      await t.store.put(t.key("old.log"), bytes(700));
      await t.ledger.reserve(t.request("new.log", 200));
      await t.ledger.forget(t.scope, t.key("old.log"));
      await t.ledger.forget(t.scope, t.key("new.log"));
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 0,
        pendingBytes: 200,
        totalBytes: 200,
        objects: 0,
        pendingUploads: 1,
      });
      await t.ledger.reserve(t.request("big.log", 800));
      await expectStowageError(t.ledger.reserve(t.request("more.log", 1)), "QUOTA_EXCEEDED");
    });

    it("a commit keeps room for a second, larger URL for the same key (audit: 150 B against 100)", async () => {
      // Two URLs for q.png, 10 and 60 bytes: one reservation of 60.
      await t.ledger.reserve(t.request("q.png", 10, 100));
      expect((await t.ledger.reserve(t.request("q.png", 60, 100))).usage).toEqual({
        usedBytes: 0,
        pendingBytes: 60,
        totalBytes: 60,
        objects: 0,
        pendingUploads: 1,
      });
      // The 10-byte upload lands and is committed; the 60-byte URL can still write 60.
      await t.store.put(t.key("q.png"), bytes(10));
      await t.ledger.commit({ scope: t.scope, key: t.key("q.png"), size: 10 });
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 10,
        pendingBytes: 50,
        totalBytes: 60,
        objects: 1,
        pendingUploads: 1,
      });
      // 60 + 90 > 100: refused, where 150 bytes would have ended up stored.
      await expectStowageError(t.ledger.reserve(t.request("r.png", 90, 100)), "QUOTA_EXCEEDED");
      expect((await t.ledger.reserve(t.request("r.png", 40, 100))).usage.totalBytes).toBe(100);
      await t.store.put(t.key("r.png"), bytes(40));
      await t.ledger.commit({ scope: t.scope, key: t.key("r.png"), size: 40 });
      await t.store.put(t.key("q.png"), bytes(60));
      await t.ledger.commit({ scope: t.scope, key: t.key("q.png"), size: 60 });
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 100,
        pendingBytes: 0,
        totalBytes: 100,
        objects: 2,
        pendingUploads: 0,
      });
    });

    it("a deleted object's valid URL keeps its room (audit: swept, then uploaded again, 170 B against 100)", async () => {
      await t.ledger.reserve(t.request("a.png", 80, 100));
      await t.store.put(t.key("a.png"), bytes(80));
      await t.ledger.commit({ scope: t.scope, key: t.key("a.png"), size: 80 });
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 80,
        pendingBytes: 0,
        totalBytes: 80,
        objects: 1,
        pendingUploads: 0,
      });
      // The retention sweep deletes a.png; its URL is still valid and may upload 80 bytes again.
      await t.store.delete(t.key("a.png"));
      await t.ledger.forget(t.scope, t.key("a.png"));
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 0,
        pendingBytes: 80,
        totalBytes: 80,
        objects: 0,
        pendingUploads: 1,
      });
      await expectStowageError(t.ledger.reserve(t.request("b.png", 90, 100)), "QUOTA_EXCEEDED");
      await t.store.put(t.key("a.png"), bytes(80));
      await t.ledger.commit({ scope: t.scope, key: t.key("a.png"), size: 80 });
      expect((await t.ledger.reserve(t.request("b.png", 20, 100))).usage).toEqual({
        usedBytes: 80,
        pendingBytes: 20,
        totalBytes: 100,
        objects: 1,
        pendingUploads: 1,
      });
    });

    it("once every URL for a key has expired, its reservation ends: what the key holds counts", async () => {
      await t.ledger.reserve(t.expiredRequest("a.png", 80));
      await t.ledger.commit({ scope: t.scope, key: t.key("a.png"), size: 80 });
      await t.ledger.forget(t.scope, t.key("a.png"));
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 0,
        pendingBytes: 0,
        totalBytes: 0,
        objects: 0,
        pendingUploads: 0,
      });
      expect((await t.ledger.reserve(t.request("b.png", 1000))).usage.totalBytes).toBe(1000);
    });

    it("commit and forget before a scope's first use do not replace its first listing", async () => {
      await t.store.put(t.key("x.bin"), bytes(70));
      await t.ledger.commit({ scope: t.scope, key: t.key("x.bin"), size: 999 });
      await t.ledger.forget(t.scope, t.key("x.bin"));
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ usedBytes: 70, objects: 1 });
    });
  });
}

/** Revocation: every reservation of the scope ended at once, counted, other scopes untouched. */
export function describeRevoke(t: LedgerFixture): void {
  describe("revoke", () => {
    it("ends every reservation of the scope at once, and counts the revocation; other scopes keep theirs", async () => {
      const other = `${t.owner}s2/`;
      const otherRequest = { ...t.request("o.png", 500), scope: other, key: `${other}artifacts/o.png` };
      await t.ledger.reserve(otherRequest);
      await t.ledger.reserve(t.request("a.png", 400));
      await t.ledger.reserve(t.request("b.png", 500));
      expect(await t.ledger.revocations(t.scope)).toBe(0);
      await t.ledger.revoke(t.scope);
      expect(await t.ledger.revocations(t.scope)).toBe(1);
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 0,
        pendingBytes: 0,
        totalBytes: 0,
        objects: 0,
        pendingUploads: 0,
      });
      // The room is free now, not when the revoked URLs expire.
      expect((await t.ledger.reserve(t.request("c.png", 1000))).usage.totalBytes).toBe(1000);
      expect(await t.ledger.usage(other, t.source)).toMatchObject({ pendingBytes: 500 });
      expect(await t.ledger.revocations(other)).toBe(0);
      await t.ledger.revoke(t.scope);
      expect(await t.ledger.revocations(t.scope)).toBe(2);
    });

    it("keeps what the keys hold: the objects are the deleter's to delete and reconcile", async () => {
      await t.store.put(t.key("kept.bin"), bytes(60));
      await t.ledger.reserve(t.request("a.png", 400));
      await t.ledger.revoke(t.scope);
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ usedBytes: 60, pendingBytes: 0 });
    });

    it("a release after the revocation leaves a newer reservation of its key alone; a scope never used has no revocation", async () => {
      const reservation = await t.ledger.reserve(t.request("a.png", 400));
      await t.ledger.revoke(t.scope);
      await t.ledger.reserve(t.request("a.png", 300));
      await reservation.release();
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ pendingBytes: 300, pendingUploads: 1 });
      expect(await t.ledger.revocations(`${t.owner}never-used/`)).toBe(0);
    });
  });
}

/** Reconcile: a listing's findings, except what the ledger recorded while it ran. */
export function describeReconcile(t: LedgerFixture): void {
  describe("reconcile", () => {
    beforeEach(async () => {
      await t.store.put(t.key("a.bin"), bytes(10));
      await t.store.put(t.key("c.bin"), bytes(5));
      expect((await t.ledger.usage(t.scope, t.source)).usedBytes).toBe(15);
    });

    it("a commit or forget that lands while a listing runs keeps what it said", async () => {
      const listedAt = new Date();
      // The listing reads a.bin (10 bytes) and c.bin; meanwhile another process overwrites
      // a.bin, uploads b.bin after the listing passed its place, and deletes c.bin.
      await t.ledger.commit({ scope: t.scope, key: t.key("a.bin"), size: 70 });
      await t.ledger.commit({ scope: t.scope, key: t.key("b.bin"), size: 30 });
      await t.ledger.forget(t.scope, t.key("c.bin"));
      await t.ledger.reconcile(
        t.scope,
        t.listing(
          [
            ["a.bin", 10],
            ["c.bin", 5],
          ],
          listedAt,
        ),
      );
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 100,
        pendingBytes: 0,
        totalBytes: 100,
        objects: 2,
        pendingUploads: 0,
      });
    });

    it("a listing that started after the ledger's records replaces them", async () => {
      await t.ledger.commit({ scope: t.scope, key: t.key("a.bin"), size: 70 });
      await t.ledger.commit({ scope: t.scope, key: t.key("b.bin"), size: 30 });
      await t.ledger.forget(t.scope, t.key("c.bin"));
      await t.ledger.reconcile(
        t.scope,
        t.listing(
          [
            ["a.bin", 10],
            ["c.bin", 5],
            ["d.bin", 1],
          ],
          hoursFromNow(1),
        ),
      );
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ usedBytes: 16, objects: 3 });
    });

    it("a listing that started before one already reconciled changes nothing", async () => {
      await t.ledger.reconcile(t.scope, t.listing([["a.bin", 1]], hoursFromNow(2)));
      await t.ledger.reconcile(
        t.scope,
        t.listing(
          [
            ["a.bin", 99],
            ["b.bin", 99],
          ],
          hoursFromNow(1),
        ),
      );
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ usedBytes: 1, objects: 1 });
    });

    it("leaves reservations as they are", async () => {
      await t.ledger.reserve(t.request("up.bin", 300));
      await t.ledger.reconcile(t.scope, t.listing([], hoursFromNow(1)));
      expect(await t.ledger.usage(t.scope, t.source)).toEqual({
        usedBytes: 0,
        pendingBytes: 300,
        totalBytes: 300,
        objects: 0,
        pendingUploads: 1,
      });
    });
  });
}
