import type { ObjectStore, OperationOptions } from "@stowage/core";
import { contentIdOfNestedRecordKey } from "./record-keys.js";

/** Options of {@link iterateContentRefIds}. */
export interface IterateContentRefIdsOptions extends OperationOptions {
  /** The store the registries keep their records in. */
  records: ObjectStore;
  /** Where to look: every registry whose prefix starts here (e.g. `content-refs/`, above each tenant's). */
  prefix?: string;
}

/**
 * The content ids recorded by every content registry below `prefix` (one per tenant, say): the
 * blobs a garbage collection must keep for them. A registry's own `iterateIds()` covers one
 * registry; this covers all of them without knowing their prefixes.
 */
export async function* iterateContentRefIds(options: IterateContentRefIdsOptions): AsyncGenerator<string> {
  const { records, prefix = "", signal } = options;
  for await (const item of records.iterate({ prefix, ...(signal ? { signal } : {}) })) {
    const id = contentIdOfNestedRecordKey(item.key);
    if (id !== null) yield id;
  }
}
