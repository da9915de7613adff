import { defineObjectStore, type ObjectStore, StowageError } from "@stowage/core";
import type { DataKeys } from "./data-keys.js";
import { openBytes, openStream, sealBytes, sealStream } from "./sealed-body.js";
import { plaintextSize } from "./sealed-format.js";

/** The scope whose data keys seal what the deployment's blobs and its own records hold. */
export const DEPLOYMENT_SCOPE = "deployment";

const PRINCIPAL_NAMESPACE = /^[^/]+\/(user|org)\/([^/]+)\//;

/**
 * Whose data key seals `key`: the principal whose namespace it is in (`<prefix><kind>/<id>/…`,
 * the layout of every store of the table and of the deployment's per-principal records), else the
 * deployment's (blobs are shared by every principal that stored them; see ARCHITECTURE.md).
 */
export function scopeOfKey(key: string): string {
  const match = PRINCIPAL_NAMESPACE.exec(key);
  return match ? `${match[1]}/${match[2]}` : DEPLOYMENT_SCOPE;
}

/**
 * `inner` with every object sealed (AES-256-GCM, framed in segments; see sealed-format.ts) under
 * its scope's data key: what callers put and get is plaintext, what `inner` holds is not. Sizes
 * in `head` and `list` are the plaintext's, computed from the stored size. A move re-seals (the
 * object's key is bound into its ciphertext), so it is never native; direct URLs are not offered
 * (a client would upload or download ciphertext past the seal).
 */
export function createEncryptedObjectStore(inner: ObjectStore, keys: DataKeys): ObjectStore {
  const lookup = (key: string) => (dataKeyId: string) => keys.dataKey(scopeOfKey(key), dataKeyId);
  return defineObjectStore({
    name: `encrypted ${inner.name}`,
    atomicCreateOnly: inner.capabilities.atomicCreateOnly,
    keepsContentType: inner.capabilities.contentType,
    async put(key, body, options) {
      const dataKey = await keys.current(scopeOfKey(key), options);
      if (body instanceof Uint8Array) {
        const result = await inner.put(key, sealBytes(dataKey, key, body), options);
        return { ...result, size: body.byteLength };
      }
      let size = 0;
      const counted = body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            size += chunk.byteLength;
            controller.enqueue(chunk);
          },
        }),
      );
      const result = await inner.put(key, sealStream(dataKey, key, counted), options);
      return { ...result, size };
    },
    async get(key, options) {
      // The inner store's bytes are this call's own (`ObjectStore.get`): opened over themselves.
      const sealed = await inner.get(key, options);
      return sealed && openBytes(lookup(key), key, sealed, { overSealed: true });
    },
    async stream(key, options) {
      const sealed = await inner.stream(key, options);
      return sealed && openStream(lookup(key), key, sealed);
    },
    async head(key, options) {
      const info = await inner.head(key, options);
      return info && { ...info, size: plaintextSize(info.size) };
    },
    delete: (key, options) => inner.delete(key, options),
    async list(options) {
      const page = await inner.list(options);
      return { ...page, items: page.items.map((item) => ({ ...item, size: plaintextSize(item.size) })) };
    },
    async *iterate(options) {
      for await (const item of inner.iterate(options)) yield { ...item, size: plaintextSize(item.size) };
    },
    // A key is the same sealed or not: the inner store's names-only listing, not `iterate`'s items.
    keys: (options) => inner.keys(options).byPage(),
    touch: (key, options) => inner.touch(key, options),
    mapError: (err, context) =>
      StowageError.is(err) ? err : new StowageError("INTERNAL", `${context} failed`, { cause: err }),
  });
}
