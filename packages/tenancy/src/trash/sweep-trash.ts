import {
  isSafeId,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  StowageError,
} from "@stowage/core";
import type { TenantBase } from "../create-stowage.js";
import { SHARED_LAYOUT } from "../shared/shared-layout.js";
import type { StoreTable } from "../store-definition.js";
import { purgeFromTrash, restoreFromTrash } from "./trash.js";
import { parseEntryKey, readDecision, readEntry, removeEntry } from "./trash-entries.js";

/**
 * How old a trash entry no registration names, or a decision nobody finished, must be before a
 * sweep takes it for a crash's leftover: far longer than a deletion, a restore or a purge takes,
 * so a live one is never finished (or undone) twice.
 */
const STALE_TRASH_MS = 15 * 60 * 1000;
/** Purges one sweep run does at most: a backlog is worked off over several runs. */
const TRASH_PURGES_PER_SWEEP = 100;

/**
 * One pass over every principal's trash: purges each session whose grace period is over (the
 * table's deletion and its audit rows, by whoever deleted it), at most
 * {@link TRASH_PURGES_PER_SWEEP} per run; finishes a restore or a purge a crash cut short; removes
 * an entry a crash left before its session was marked. Idempotent: a second run finds nothing. A
 * failing purge does not stop the others; the first failure is thrown once the pass is over.
 */
export async function sweepTrash(
  store: ObjectStore,
  stores: StoreTable,
  tenantOf: (principal: Principal) => TenantBase & Record<string, unknown>,
  options: OperationOptions & { now?: Date } = {},
): Promise<number> {
  const { now = new Date(), ...operation } = options;
  let purged = 0;
  let failure: unknown;
  for await (const item of store.iterate({ ...operation, prefix: SHARED_LAYOUT.trash })) {
    if (purged >= TRASH_PURGES_PER_SWEEP) break;
    const parts = parseEntryKey(item.key);
    if (parts === undefined || !isSafeId(parts.id)) continue;
    const tenant = tenantOf({ kind: parts.kind, id: parts.id });
    try {
      const entry = await readEntry(store, item.key, operation);
      if (entry === null) continue;
      const mark = await tenant.registeredSessions.trashMark(parts.sessionId, operation);
      const named = mark?.trashId === parts.trashId;
      const decision = await readDecision(store, item.key, operation);
      const stale = (at: string) => now.getTime() - Date.parse(at) > STALE_TRASH_MS;
      if (decision !== null) {
        if (!stale(decision.at)) continue;
        if (!named) await removeEntry(store, item.key, operation);
        else if (decision.action === "restore") {
          await restoreFromTrash(store, tenant, "session", parts.sessionId, { ...operation, resume: true });
        } else {
          await purgeFromTrash(store, stores, tenant, "session", parts.sessionId, {
            ...operation,
            resume: true,
          });
          purged++;
        }
      } else if (!named) {
        if (stale(entry.trashedAt)) await removeEntry(store, item.key, operation);
      } else if (Date.parse(mark!.purgeAfter) <= now.getTime()) {
        await purgeFromTrash(store, stores, tenant, "session", parts.sessionId, operation);
        purged++;
      }
    } catch (err) {
      // A restore or another sweep decided first: theirs to finish.
      if (!StowageError.is(err, "CONFLICT")) failure ??= err;
    }
  }
  if (failure !== undefined) throw failure;
  return purged;
}
