import { loadVitest } from "@stowage/core/testing";
import type { QuotaLedger } from "../quota-ledger.js";
import { ledgerFixture } from "./ledger-fixture.js";
import { describeHostileInput } from "./ledger-hostile-cases.js";
import { describeModelCheck } from "./ledger-model-check.js";
import { describeCommitAndForget, describeReconcile, describeRevoke } from "./ledger-record-cases.js";
import { describeExpiry, describeReserve, describeUsage } from "./ledger-usage-cases.js";

const { describe, it } = await loadVitest("@stowage/uploads/testing");

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

/**
 * The behaviour every uploads `QuotaLedger` must have, on the real clock: reserving within and
 * over a limit, a key's size replacing (never adding to) what it holds, release, commit, forget,
 * a reservation outliving commits and deletions while a URL for its key is valid, reconcile
 * (including a commit that lands while a listing runs), expiry settled by a HEAD through the
 * source, usage, revocation, 20 concurrent reservations against one limit, a model-checked random
 * sequence, and hostile input. A shared ledger adds its own cross-process tests.
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
    const t = ledgerFixture(() => options.createLedger());
    describeUsage(t);
    describeReserve(t);
    describeExpiry(t);
    describeCommitAndForget(t);
    describeRevoke(t);
    describeReconcile(t);
    describeHostileInput(t);
    describeModelCheck(t);
  });
}
