import type { OperationOptions } from "@stowage/core";
import { pruneDeletionAudits } from "./shared/deletion-audit.js";
import type { DeletionAuditInput } from "./shared/deletion-audit-rows.js";
import { principalOfOwner } from "./shared/owner.js";
import { SHARED_LAYOUT } from "./shared/shared-layout.js";
import type { SharedStores } from "./shared/shared-stores.js";
import type { Deployment, StoreTable } from "./store-definition.js";

/** What one sweep did, per store that sweeps: how many things went (and in how long), or why it failed. */
export type SweepReport = Record<string, { removed: number; durationMs: number } | { failed: unknown }>;

/** What a store's sweep is given: the operation's signal, and where it records what it removed. */
export interface SweepContext extends OperationOptions {
  /**
   * Appends rows to the deletion audit of `owner` (`user:alice`, as the store records owners), or
   * of the deployment when the store does not know whose the things were (`null`). A sweep calls
   * it after each bounded batch it deleted, before the next: a failing audit stops the sweep.
   */
  audit(owner: string | null, rows: readonly DeletionAuditInput[]): Promise<void>;
}

/** Audits are pruned at most this often per process: a prune lists every audit object. */
export const AUDIT_PRUNE_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** The pseudo-store a sweep report names the trash's purges under. */
export const TRASH_SWEEP_NAME = "trash";

/** The pseudo-store a sweep report names the audit's own pruning under. */
export const AUDIT_SWEEP_NAME = "deletionAudit";

/** The `audit` of a sweep: each owner's rows to its principal's audit, the rest to the deployment's. */
export function sweepAudit(shared: SharedStores, options: OperationOptions): SweepContext["audit"] {
  return async (owner, rows) => {
    if (rows.length === 0) return;
    const principal = owner === null ? null : principalOfOwner(owner);
    if (principal) return shared.deletionAudit(principal).append(rows, options);
    const unowned =
      owner === null ? rows : rows.map((row) => ({ ...row, reason: `${row.reason} (owner ${owner})` }));
    return shared.deploymentAudit.append(unowned, options);
  };
}

/**
 * Runs every store's sweep in the table's order, then the trash's (`trash`), then prunes deletion audits past their retention
 * when `pruneAudits` says so; a failure is reported and the others still run.
 */
export async function sweepStores(
  stores: StoreTable,
  deployment: Deployment,
  shared: SharedStores,
  options: OperationOptions & { pruneAudits: boolean; trash?: () => Promise<number> },
): Promise<SweepReport> {
  const { pruneAudits, trash, ...operation } = options;
  const context: SweepContext = { ...operation, audit: sweepAudit(shared, operation) };
  const report: SweepReport = {};
  const run = async (name: string, sweep: () => Promise<number>) => {
    const started = performance.now();
    try {
      const removed = await sweep();
      report[name] = { removed, durationMs: Math.round(performance.now() - started) };
    } catch (err) {
      report[name] = { failed: err };
    }
  };
  for (const [name, row] of Object.entries(stores)) {
    if (row.sweep) await run(name, () => row.sweep!(deployment, context));
  }
  if (trash) await run(TRASH_SWEEP_NAME, trash);
  if (pruneAudits) {
    await run(AUDIT_SWEEP_NAME, () =>
      pruneDeletionAudits(deployment.shared, SHARED_LAYOUT.deletionAudit, operation),
    );
  }
  return report;
}
