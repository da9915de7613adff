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
 * The content ids (`artifact_index[].artifact_id`) of every stored hot-state version below
 * `prefix` (one store per tenant, say): what a garbage collection must keep for them, since an
 * index entry outlives the content record it was made from. Each version is decoded as a reader
 * would: a damaged one throws INTEGRITY rather than being skipped, so a collection that uses this
 * as a root stops instead of deleting what the version may reference. `blob:sha256:` refs in the
 * free-text fields are not ids: scan the same objects for refs too.
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
