import type { BenchCase } from "@stowage/bench-kit";
import { createMemoryQuotaLedger, type QuotaUsageSource } from "@stowage/uploads";

const RESERVATIONS_PER_RUN = 20_000;
const SCOPES = 100;
/** Requests in flight at once, as 20 concurrent upload-URL requests put them. */
const WORKERS = 20;
const LIMIT = 1024 ** 4;

/** A source of empty sessions: the cost measured is the ledger's own, no storage behind it. */
const emptySource: QuotaUsageSource = {
  async *list() {},
  head: async () => null,
};

const scopeOf = (i: number) => `sessions/user/bench/s${i % SCOPES}/`;

/**
 * The smallest check-and-reserve with the same guarantees (serialized per session, a key's new
 * size replaces its reservation): a promise chain and a map of reservations per session.
 */
function minimalLedger() {
  const scopes = new Map<string, { queue: Promise<void>; pending: Map<string, number>; total: number }>();
  return (scope: string, key: string, bytes: number) => {
    let state = scopes.get(scope);
    if (!state) {
      state = { queue: Promise.resolve(), pending: new Map(), total: 0 };
      scopes.set(scope, state);
    }
    const s = state;
    const run = s.queue.then(() => {
      const previous = s.pending.get(key) ?? 0;
      const growth = Math.max(0, bytes - previous);
      if (s.total + growth > LIMIT) throw new Error("quota exceeded");
      s.pending.set(key, Math.max(previous, bytes));
      s.total += growth;
    });
    s.queue = run.catch(() => {});
    return run;
  };
}

/** `work(i)` for i in 0..count-1, by {@link WORKERS} workers each awaiting one call at a time. */
async function inWorkers(count: number, work: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) await work(i);
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
}

/** The memory ledger's reservations against the minimal check-and-reserve, both warm. */
export function ledgerThroughputCase(): BenchCase {
  const ledger = createMemoryQuotaLedger();
  const minimal = minimalLedger();
  const urlExpiresAt = new Date(Date.now() + 3_600_000);
  return {
    name: `memory quota ledger: ${RESERVATIONS_PER_RUN.toLocaleString("en-US")} reservations over ${SCOPES} sessions, ${WORKERS} at a time, vs a minimal serialized check-and-reserve`,
    // Ours also validates every input, keeps the reservation's handle and answers the usage, and
    // keeps the totals incremental; a quarter of the bare bookkeeping's speed is still ~5 µs a
    // reservation, nothing next to signing the URL.
    target: { kind: "speed", min: 0.25 },
    units: { count: RESERVATIONS_PER_RUN, label: "ops" },
    ours: () =>
      inWorkers(RESERVATIONS_PER_RUN, (i) => {
        const scope = scopeOf(i);
        return ledger.reserve({
          scope,
          key: `${scope}artifacts/f-${i % 50}.png`,
          bytes: 1 + (i % 7),
          limitBytes: LIMIT,
          urlExpiresAt,
          source: emptySource,
        });
      }),
    baseline: () =>
      inWorkers(RESERVATIONS_PER_RUN, (i) => {
        const scope = scopeOf(i);
        return minimal(scope, `${scope}artifacts/f-${i % 50}.png`, 1 + (i % 7));
      }),
  };
}
