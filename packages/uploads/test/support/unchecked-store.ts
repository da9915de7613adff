import type { ObjectStore } from "@stowage/core";

/** A store as Ceph RGW 16 behaves: it signs upload URLs, but never checks bytes against a SHA-256. */
export interface UncheckedStore extends ObjectStore {
  /** How many times an object was streamed (a hash pass over a stored upload reads it this way). */
  readonly streams: number;
}

/**
 * `inner` (a store with direct URLs) made to behave like Ceph RGW 16: its upload URLs bind the
 * size and type but not the SHA-256, and it declares `directUploadVerifiesSha256: false`, so the
 * upload service must check what lands itself. Counts `stream` calls.
 */
export function uncheckedStore(inner: ObjectStore): UncheckedStore {
  let streams = 0;
  const store = {
    ...inner,
    capabilities: Object.freeze({ ...inner.capabilities, directUploadVerifiesSha256: false }),
    createUploadUrl: ({ sha256: _ignored, ...request }, options) => inner.createUploadUrl!(request, options),
    stream(key, options) {
      streams++;
      return inner.stream(key, options);
    },
    get streams() {
      return streams;
    },
  } satisfies Partial<ObjectStore> & { readonly streams: number };
  return store as UncheckedStore;
}
