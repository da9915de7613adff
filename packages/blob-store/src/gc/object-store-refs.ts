import { describeValue, type ObjectStore, StowageError } from "@stowage/core";
import { scanBytesForBlobRefs } from "./ref-scanner.js";

/** Options of {@link scanObjectStoreForBlobRefs}. */
export interface ScanObjectStoreOptions {
  /** Only objects under this key prefix; default every object. */
  prefix?: string;
  /** Which objects are scanned, by key; default all. */
  include?: (key: string) => boolean;
  signal?: AbortSignal;
}

/**
 * Yields the hash of every `blob:sha256:` ref in the objects of an ObjectStore, e.g. the uploads a
 * user or an agent put into a session's storage (`sessions/…/artifacts/…`), which may embed refs.
 * Each object is streamed, never loaded whole. An object deleted since the listing is skipped;
 * any other failure is thrown, so a garbage collection fed by it stops instead of missing refs.
 */
export async function* scanObjectStoreForBlobRefs(
  store: ObjectStore,
  options: ScanObjectStoreOptions = {},
): AsyncGenerator<string> {
  if (typeof store?.keys !== "function" || typeof store.stream !== "function") {
    throw new StowageError("INVALID_INPUT", `expected an ObjectStore, got ${describeValue(store)}`);
  }
  const { prefix, include, signal } = options;
  for await (const key of store.keys({ ...(prefix === undefined ? {} : { prefix }), signal })) {
    if (include && !include(key)) continue;
    const body = await store.stream(key, { signal });
    if (!body) continue;
    yield* scanBytesForBlobRefs(body, signal ? { signal } : {});
  }
}
