// `artifacts` in the keys below is the design document's wire name (the upload key layout
// `sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`).
import { randomUUID } from "node:crypto";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { loadVitest } from "@stowage/core/testing";
import type { QuotaLedger, QuotaListing, QuotaReservationRequest } from "../quota-ledger.js";
import { type CountingSource, countingSource } from "./counting-source.js";

const { beforeEach } = await loadVitest("@stowage/uploads/testing");

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const bytes = (size: number) => new Uint8Array(size).fill(7);
/** A listing that started `hours` from now: later than anything the ledger records in the test. */
export const hoursFromNow = (hours: number) => new Date(Date.now() + hours * HOUR);

/** What every test of the suite works on, made afresh before each test. */
export interface LedgerFixture {
  ledger: QuotaLedger;
  /** Where the objects are: what `source` lists and heads. */
  store: ObjectStore;
  source: CountingSource;
  /** `sessions/user/conformance-<uuid>/`: a namespace of the test's own. */
  owner: string;
  /** `<owner>s1/`: the test's session, the ledger's scope. */
  scope: string;
  /** The key of an upload `name` in the scope. */
  key(name: string): string;
  /** A reservation of `size` bytes for `name`, its URL valid for an hour. */
  request(name: string, size: number, limitBytes?: number): QuotaReservationRequest;
  /** The same, its URL expired a day ago: settled by the ledger's next look at the scope. */
  expiredRequest(name: string, size: number): QuotaReservationRequest;
  /** A listing of the scope that found `objects` (name, size) and started at `listedAt`. */
  listing(objects: [string, number][], listedAt: Date): QuotaListing;
}

/**
 * The suite's fixture, refilled by a `beforeEach` registered here (call it inside the suite's
 * `describe`); the groups read its fields in their tests, never when they are declared.
 */
export function ledgerFixture(createLedger: () => QuotaLedger | Promise<QuotaLedger>): LedgerFixture {
  const t = {} as LedgerFixture;
  t.key = (name) => `${t.scope}artifacts/${name}`;
  t.request = (name, size, limitBytes = 1000) => ({
    scope: t.scope,
    key: t.key(name),
    bytes: size,
    limitBytes,
    urlExpiresAt: hoursFromNow(1),
    source: t.source,
  });
  t.expiredRequest = (name, size) => ({ ...t.request(name, size), urlExpiresAt: new Date(Date.now() - DAY) });
  t.listing = (objects, listedAt) => ({
    objects: objects.map(([name, size]) => ({ key: t.key(name), size })),
    listedAt,
  });
  beforeEach(async () => {
    t.ledger = await createLedger();
    t.store = createMemoryObjectStore();
    t.source = countingSource(t.store);
    t.owner = `sessions/user/conformance-${randomUUID()}/`;
    t.scope = `${t.owner}s1/`;
  });
  return t;
}
