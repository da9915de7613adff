import type { ObjectStore, OperationOptions } from "@stowage/core";
import { decodeVersion } from "./hot-state-versions.js";

/** Options of {@link iterateHotStateContentIds}: the hot-state stores' store, and a prefix above theirs. */
export interface IterateHotStateContentIdsOptions extends OperationOptions {
  store: ObjectStore;
  prefix?: string;
}

// `<store prefix><sessionId>/<version, 12 digits>.json`: what `versionKey` writes.
const VERSION_KEY = /(?:^|\/)([^/]+)\/(\d{12})\.json$/;

/**
 * The `artifact_index` ids of every stored hot-state version below `prefix` (one store per tenant,
 * say): what garbage collection must keep, since an index entry outlives its content record. A
 * damaged version throws INTEGRITY (a collection stops rather than delete what it may reference).
 * `blob:sha256:` refs in free text are not ids: scan the same objects for refs too.
 */
export async function* iterateHotStateContentIds(options: IterateHotStateContentIdsOptions) {
  const { store, prefix = "", signal } = options;
  for await (const item of store.iterate({ prefix, signal })) {
    const match = VERSION_KEY.exec(item.key.slice(prefix.length));
    if (!match) continue;
    const bytes = await store.get(item.key, { signal });
    if (bytes === null) continue; // removed since the listing
    const version = decodeVersion(bytes, match[1]!, Number(match[2]));
    for (const entry of version.state.artifact_index ?? []) yield entry.artifact_id;
  }
}
