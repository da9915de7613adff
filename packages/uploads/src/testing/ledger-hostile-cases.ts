// `artifacts` in the keys below is the design document's wire name (the upload key layout
// `sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`).
import { expectStowageError, HOSTILE_KEYS, HOSTILE_PREFIXES, loadVitest } from "@stowage/core/testing";
import type { QuotaListing, QuotaReservationRequest } from "../quota-ledger.js";
import type { LedgerFixture } from "./ledger-fixture.js";

const { describe, expect, it } = await loadVitest("@stowage/uploads/testing");

/** Hostile and malformed scopes, keys, sizes, dates and objects: INVALID_INPUT, nothing stored. */
export function describeHostileInput(t: LedgerFixture): void {
  describe("refuses hostile and malformed input, storing nothing", () => {
    /** The scope was never touched: its first use lists the (empty) store. */
    const expectUntouched = async () => {
      expect(await t.ledger.usage(t.scope, t.source)).toMatchObject({ totalBytes: 0, pendingUploads: 0 });
      expect(t.source.lists).toBe(1);
    };

    it.each(HOSTILE_KEYS.map(({ value, why }) => [why, value]))("key: %s", async (_why, value) => {
      // Under the scope where it is a string, so that only the key itself is at fault.
      const bad = (typeof value === "string" ? `${t.scope}${value}` : value) as string;
      await expectStowageError(t.ledger.reserve({ ...t.request("x", 1), key: bad }), "INVALID_INPUT");
      await expectStowageError(t.ledger.commit({ scope: t.scope, key: bad, size: 1 }), "INVALID_INPUT");
      await expectStowageError(t.ledger.forget(t.scope, bad), "INVALID_INPUT");
      await expectStowageError(
        t.ledger.reconcile(t.scope, { objects: [{ key: bad, size: 1 }], listedAt: new Date() }),
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
          t.ledger.reserve({ ...t.request("x", 1), scope: bad, key: inside }),
          "INVALID_INPUT",
        );
        await expectStowageError(t.ledger.commit({ scope: bad, key: inside, size: 1 }), "INVALID_INPUT");
        await expectStowageError(t.ledger.forget(bad, inside), "INVALID_INPUT");
        await expectStowageError(
          t.ledger.reconcile(bad, { objects: [], listedAt: new Date() }),
          "INVALID_INPUT",
        );
        await expectStowageError(t.ledger.usage(bad, t.source), "INVALID_INPUT");
        await expectStowageError(t.ledger.revoke(bad), "INVALID_INPUT");
        await expectStowageError(t.ledger.revocations(bad), "INVALID_INPUT");
      },
    );

    it("keys outside their scope, and the scope itself", async () => {
      for (const bad of [`${t.owner}s2/artifacts/x.png`, t.scope, "sessions/elsewhere/x.png"]) {
        await expectStowageError(t.ledger.reserve({ ...t.request("x", 1), key: bad }), "INVALID_INPUT");
        await expectStowageError(t.ledger.commit({ scope: t.scope, key: bad, size: 1 }), "INVALID_INPUT");
        await expectStowageError(t.ledger.forget(t.scope, bad), "INVALID_INPUT");
        await expectStowageError(
          t.ledger.reconcile(t.scope, { objects: [{ key: bad, size: 1 }], listedAt: new Date() }),
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
        await expectStowageError(t.ledger.reserve({ ...t.request("x", 1), bytes: bad }), "INVALID_INPUT");
        await expectStowageError(
          t.ledger.reserve({ ...t.request("x", 1), limitBytes: bad }),
          "INVALID_INPUT",
        );
        await expectStowageError(
          t.ledger.commit({ scope: t.scope, key: t.key("x"), size: bad }),
          "INVALID_INPUT",
        );
        await expectStowageError(
          t.ledger.reconcile(t.scope, { objects: [{ key: t.key("x"), size: bad }], listedAt: new Date() }),
          "INVALID_INPUT",
        );
      }
      await expectUntouched();
    });

    it("dates that are not dates", async () => {
      for (const date of [new Date("nope"), "2030-01-01", Date.now(), null, undefined]) {
        const bad = date as Date;
        await expectStowageError(
          t.ledger.reserve({ ...t.request("x", 1), urlExpiresAt: bad }),
          "INVALID_INPUT",
        );
        await expectStowageError(
          t.ledger.reconcile(t.scope, { objects: [], listedAt: bad }),
          "INVALID_INPUT",
        );
      }
      await expectUntouched();
    });

    it("requests, commits, listings and sources that are not objects", async () => {
      for (const bad of [null, undefined, "x", 42]) {
        await expectStowageError(
          t.ledger.reserve(bad as unknown as QuotaReservationRequest),
          "INVALID_INPUT",
        );
        await expectStowageError(t.ledger.commit(bad as never), "INVALID_INPUT");
        await expectStowageError(
          t.ledger.reconcile(t.scope, bad as unknown as QuotaListing),
          "INVALID_INPUT",
        );
        await expectStowageError(
          t.ledger.reconcile(t.scope, { objects: [bad], listedAt: new Date() } as never),
          "INVALID_INPUT",
        );
        await expectStowageError(
          t.ledger.reserve({ ...t.request("x", 1), source: bad as never }),
          "INVALID_INPUT",
        );
        await expectStowageError(t.ledger.usage(t.scope, bad as never), "INVALID_INPUT");
      }
      await expectStowageError(
        t.ledger.reconcile(t.scope, { objects: 5, listedAt: new Date() } as unknown as QuotaListing),
        "INVALID_INPUT",
      );
      await expectStowageError(
        t.ledger.reserve({ ...t.request("x", 1), source: {} as never }),
        "INVALID_INPUT",
      );
      await expectUntouched();
    });
  });
}
