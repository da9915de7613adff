import { defineObjectStore, type ObjectStoreDriver } from "./define-object-store.js";
import { StowageError } from "./errors.js";
import type { ListItem, ObjectStore } from "./object-store.js";
import { bytesToStream, readStreamToBytes } from "./streams.js";
import { compareUtf8 } from "./utf8.js";

interface StoredObject {
  bytes: Uint8Array;
  lastModified: Date;
  contentType: string | undefined;
}

export interface MemoryObjectStoreOptions {
  /** Name used in error messages; defaults to `memory`. */
  name?: string;
}

/** First index of sorted `keys` where the monotone predicate `isAtOrPast` holds (binary search). */
function firstIndexWhere(keys: readonly string[], isAtOrPast: (key: string) => boolean): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (isAtOrPast(keys[mid]!)) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** An in-process ObjectStore: the reference driver, and the store for tests and examples. */
export function createMemoryObjectStore(options: MemoryObjectStoreOptions = {}): ObjectStore {
  const objects = new Map<string, StoredObject>();
  // Keys in UTF-8 order, rebuilt lazily after writes, so listing stays cheap between writes.
  let sortedKeys: string[] | undefined;

  const keysInOrder = (): string[] => {
    sortedKeys ??= [...objects.keys()].sort(compareUtf8);
    return sortedKeys;
  };

  const store = (key: string, bytes: Uint8Array, contentType: string | undefined) => {
    if (!objects.has(key)) sortedKeys = undefined;
    objects.set(key, { bytes, lastModified: new Date(), contentType });
  };

  const driver: ObjectStoreDriver = {
    name: options.name ?? "memory",
    atomicCreateOnly: true,
    keepsContentType: true,
    // move re-files the same entry, timestamp included.
    moveKeepsLastModified: true,

    async put(key, body, { ifNoneMatch, contentType, signal }) {
      // Copy, so that a caller reusing its buffer cannot change what was stored.
      const bytes = body instanceof Uint8Array ? body.slice() : await readStreamToBytes(body, { signal });
      // Checked after the body is read: a concurrent create-only put may have won meanwhile.
      const created = !objects.has(key);
      if (ifNoneMatch === "*" && !created) {
        throw new StowageError("ALREADY_EXISTS", `memory put: ${JSON.stringify(key)} already exists`);
      }
      store(key, bytes, contentType);
      return { key, size: bytes.byteLength, created };
    },

    async get(key) {
      const object = objects.get(key);
      return object ? object.bytes.slice() : null;
    },

    async stream(key) {
      const object = objects.get(key);
      return object ? bytesToStream(object.bytes.slice()) : null;
    },

    async head(key) {
      const object = objects.get(key);
      if (!object) return null;
      return {
        size: object.bytes.byteLength,
        lastModified: new Date(object.lastModified),
        ...(object.contentType === undefined ? {} : { contentType: object.contentType }),
      };
    },

    async delete(key) {
      if (objects.delete(key)) sortedKeys = undefined;
    },

    async list({ prefix, cursor, limit }) {
      const keys = keysInOrder();
      const firstWithPrefix = firstIndexWhere(keys, (key) => compareUtf8(key, prefix) >= 0);
      const firstAfterCursor =
        cursor === undefined ? 0 : firstIndexWhere(keys, (key) => compareUtf8(key, cursor) > 0);
      const low = Math.max(firstWithPrefix, firstAfterCursor);
      const items: ListItem[] = [];
      let index = low;
      for (; index < keys.length && items.length < limit; index++) {
        const key = keys[index]!;
        if (!key.startsWith(prefix)) break;
        const object = objects.get(key)!;
        items.push({ key, size: object.bytes.byteLength, lastModified: new Date(object.lastModified) });
      }
      const more = index < keys.length && keys[index]!.startsWith(prefix);
      return { items, cursor: more ? items[items.length - 1]!.key : undefined };
    },

    async move(from, to, { ifNoneMatch }) {
      const object = objects.get(from);
      if (!object) throw new StowageError("NOT_FOUND", `memory move: ${JSON.stringify(from)} does not exist`);
      const created = !objects.has(to);
      if (ifNoneMatch === "*" && !created) {
        throw new StowageError("ALREADY_EXISTS", `memory move: ${JSON.stringify(to)} already exists`);
      }
      objects.delete(from);
      sortedKeys = undefined;
      objects.set(to, object);
      return { key: to, size: object.bytes.byteLength, created };
    },

    async touch(key) {
      const object = objects.get(key);
      if (!object) return false;
      object.lastModified = new Date();
      return true;
    },
  };
  return defineObjectStore(driver);
}
