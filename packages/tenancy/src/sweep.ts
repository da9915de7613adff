import type { OperationOptions } from "@stowage/core";
import type { Deployment, StoreTable } from "./store-definition.js";

/** What one sweep did, per store that sweeps: how many things went, or why it failed. */
export type SweepReport = Record<string, { removed: number } | { failed: unknown }>;

/** Runs every store's sweep in the table's order; a failure is reported and the others still run. */
export async function sweepStores(
  stores: StoreTable,
  deployment: Deployment,
  options: OperationOptions,
): Promise<SweepReport> {
  const report: SweepReport = {};
  for (const [name, row] of Object.entries(stores)) {
    if (!row.sweep) continue;
    try {
      report[name] = { removed: await row.sweep(deployment, options) };
    } catch (err) {
      report[name] = { failed: err };
    }
  }
  return report;
}
