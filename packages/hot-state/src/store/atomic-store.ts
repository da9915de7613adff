import { describeValue, type ObjectStore, StowageError } from "@stowage/core";

/**
 * Throws INVALID_INPUT unless `store` is an ObjectStore whose create-only puts are atomic. The
 * hot-state store and the metrics log settle competing writers with create-only puts alone; on a
 * store where two of them can both "create" a key (S3 without conditional writes), the loser's
 * write would silently replace the winner's instead of getting CONFLICT. Reason
 * `NOT_ATOMIC_STORE` when the store says it is not atomic.
 */
export function assertAtomicStore(store: ObjectStore, who: string): void {
  if (!store || typeof store.put !== "function") {
    throw new StowageError("INVALID_INPUT", `${who} needs an ObjectStore, got ${describeValue(store)}`);
  }
  if (store.capabilities?.atomicCreateOnly !== true) {
    throw new StowageError(
      "INVALID_INPUT",
      `${who} needs an ObjectStore whose create-only puts are atomic (capabilities.atomicCreateOnly); ` +
        `${describeValue(store.name)} is not, so two writers could overwrite each other. ` +
        "On S3, enable conditional writes.",
      { reason: "NOT_ATOMIC_STORE" },
    );
  }
}
