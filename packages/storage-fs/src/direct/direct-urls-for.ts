import { defineObjectStore, type ObjectStore, StowageError } from "@stowage/core";
import { createDirectTransfer, type FsDirectUrlOptions } from "./direct-transfer.js";

/** A store given signed URLs served by the app: its handler, to mount at the URLs' base. */
export interface StoreWithDirectUrls extends ObjectStore {
  createUploadUrl: NonNullable<ObjectStore["createUploadUrl"]>;
  createDownloadUrl: NonNullable<ObjectStore["createDownloadUrl"]>;
  handleDirectRequest(request: Request): Promise<Response>;
}

/**
 * `store` with the signed URLs of an fs store (`directUrls`: the same signature, checks and
 * handler), whose uploads are put into `store` and downloads read from it through this process.
 * For a store whose bytes must pass through the app on their way in and out, such as a sealed
 * (encrypted) one on any backend: a URL of its backend would carry them past the seal.
 */
export function directUrlsFor(store: ObjectStore, options: FsDirectUrlOptions): StoreWithDirectUrls {
  // `store` has no root directory of this process to keep out of the errors it answers with.
  const transfer = createDirectTransfer(store, options, "");
  const { capabilities } = store;
  const served = defineObjectStore({
    name: store.name,
    atomicCreateOnly: capabilities.atomicCreateOnly,
    keepsContentType: capabilities.contentType,
    // The handler hashes an upload while it streams and stores nothing that differs.
    directUploadVerifiesSha256: true,
    moveKeepsLastModified: capabilities.moveKeepsLastModified,
    put: (key, body, operation) => store.put(key, body, operation),
    get: (key, operation) => store.get(key, operation),
    stream: (key, operation) => store.stream(key, operation),
    head: (key, operation) => store.head(key, operation),
    delete: (key, operation) => store.delete(key, operation),
    list: (list) => store.list(list),
    iterate: (iterate) => store.iterate(iterate),
    // The store's own pages of keys: its names-only listing, not `iterate`'s items.
    keys: (keys) => store.keys(keys).byPage(),
    ...(capabilities.nativeMove ? { move: (from, to, operation) => store.move(from, to, operation) } : {}),
    ...(capabilities.nativeTouch ? { touch: (key, operation) => store.touch(key, operation) } : {}),
    createUploadUrl: (request) => transfer.createUploadUrl(request),
    createDownloadUrl: (request) => transfer.createDownloadUrl(request),
    mapError: (err, context) =>
      StowageError.is(err) ? err : new StowageError("INTERNAL", `${context} failed`, { cause: err }),
  });
  return {
    ...served,
    createUploadUrl: served.createUploadUrl!,
    createDownloadUrl: served.createDownloadUrl!,
    handleDirectRequest: transfer.handleDirectRequest,
  };
}
