import {
  assertKeyDirectoryPrefix,
  assertSafeId,
  describeValue,
  type ObjectStore,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import { toBlobHash } from "./blob-hash.js";
import type { BlobInfo, BlobStore } from "./blob-store.js";

/**
 * One owner's view of a shared blob store: a `BlobStore` without what reaches every owner's bytes
 * (`objects`, `keyFor`) or says where they are kept (`layout`, `prefix`).
 */
export type OwnedBlobStore = Omit<
  BlobStore,
  "objects" | "keyFor" | "layout" | "prefix" | "trashPrefix" | "restoreCollected"
>;

/** Marks a view (across duplicated package copies) so that `collectGarbage` can refuse one by name. */
const OWNED_VIEW = Symbol.for("@stowage/blob-store.ownedView");

/** True when `value` is a view made by {@link createOwnedBlobStore}. */
export function isOwnedBlobStore(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.hasOwn(value, OWNED_VIEW);
}

/**
 * Refuses marks that could land on the blob store's own keys (a mark read or deleted as a blob):
 * in the same ObjectStore, marks need a prefix of their own, outside the blob store's prefix
 * and not holding it. An empty blob prefix spans every key (a sharded layout's `2d/` included).
 */
export function assertMarksApart(blobs: BlobStore, marks: ObjectStore, prefix: string, caller: string): void {
  if (marks !== blobs.objects) return;
  const blobPrefix = blobs.prefix;
  if (prefix === "" || blobPrefix === "" || prefix.startsWith(blobPrefix) || blobPrefix.startsWith(prefix)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${caller}: marks in the blob store's own ObjectStore need a prefix apart from the blobs' prefix (neither inside the other, neither empty), got marks prefix ${describeValue(prefix)} and blob prefix ${describeValue(blobPrefix)}; use e.g. "blob-owners/" beside "blobs/", or another ObjectStore for the marks`,
    );
  }
}

/** Options of {@link createOwnedBlobStore}. */
export interface OwnedBlobStoreOptions {
  /** The shared, deduplicated blob store the bytes live in. */
  blobs: BlobStore;
  /** Who this view belongs to: a safe id such as `user:alice`. */
  owner: string;
  /** Where the owner's marks live (one empty object per blob it stored). */
  marks: ObjectStore;
  /** Key prefix of the marks in `marks`: `""` or ending in `/`. Default `""`. */
  prefix?: string;
}

const EMPTY = new Uint8Array(0);

/**
 * One owner's view of a shared blob store. The bytes stay deduplicated across owners, but an
 * owner reads only what it stored itself: `put` marks the blob as the owner's, every read of an
 * unmarked blob answers as if it did not exist (so another owner's hashes cannot be probed), and
 * `delete` removes only the owner's mark (the bytes go when garbage collection finds them
 * unreferenced). `put`'s `created` is about the owner too: true when the blob is new *to this
 * owner*, whether or not another owner stored the same bytes, so that it never tells one owner
 * what another stored. Verification and the logger are the shared store's; what reaches every
 * owner's bytes (`objects`, `keyFor`) is not part of the view, and `collectGarbage` refuses a view
 * (it needs the whole shared store).
 *
 * When `marks` is the blob store's own ObjectStore, `prefix` must be apart from the blob store's
 * prefix (INVALID_INPUT otherwise), or a mark key could be a blob's key. Marks in another
 * ObjectStore over the same keys (a second store on the same directory or bucket) cannot be
 * told apart: keep their prefixes apart too.
 *
 * A hash alone grants nothing: a ref written into an owner's session or thread is not proof that
 * the owner has the bytes (a hash can leak, or be computed from guessable content), so an owner
 * that references a blob reads it only if the bytes were put through its view.
 */
export function createOwnedBlobStore(options: OwnedBlobStoreOptions): OwnedBlobStore {
  const { blobs, owner, marks, prefix = "" } = options ?? ({} as OwnedBlobStoreOptions);
  if (typeof blobs?.put !== "function" || typeof marks?.put !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `createOwnedBlobStore: blobs must be a BlobStore and marks an ObjectStore, got ${describeValue({ blobs: typeof blobs, marks: typeof marks })}`,
    );
  }
  assertSafeId(owner, "owner");
  assertKeyDirectoryPrefix(prefix);
  assertMarksApart(blobs, marks, prefix, "createOwnedBlobStore");
  const ownerPrefix = `${prefix}${owner}/`;
  const markKey = (hashOrRef: string) => `${ownerPrefix}${toBlobHash(hashOrRef)}`;
  const owns = async (hashOrRef: string, opts: OperationOptions) =>
    (await marks.head(markKey(hashOrRef), opts)) !== null;

  async function* ownedInfos(opts: OperationOptions): AsyncGenerator<BlobInfo> {
    for await (const mark of marks.iterate({
      prefix: ownerPrefix,
      ...(opts.signal ? { signal: opts.signal } : {}),
    })) {
      const info = await blobs.stat(mark.key.slice(ownerPrefix.length), opts).catch((err: unknown) => {
        if (StowageError.is(err, "INVALID_INPUT")) return null; // not a mark this view wrote
        throw err;
      });
      if (info) yield info;
    }
  }

  // Built member by member, never spread from `blobs`: a view must not carry the shared store.
  const view: OwnedBlobStore & { [OWNED_VIEW]: true } = {
    [OWNED_VIEW]: true,
    logger: blobs.logger,
    async put(body: Uint8Array | ReadableStream<Uint8Array>, opts: OperationOptions = {}) {
      const stored = await blobs.put(body, opts);
      // `created` from the owner's mark, never from the shared store alone: whether someone else
      // had stored these bytes is not this owner's to learn. Bytes new to the shared store are new
      // to this owner too, mark or not (a collection took them since the owner's mark was made):
      // that says nothing of another owner, and what storing them cost is counted.
      let created = true;
      try {
        await marks.put(markKey(stored.hash), EMPTY, { ...opts, ifNoneMatch: "*" });
      } catch (err) {
        if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
        created = stored.created;
      }
      return { ...stored, created };
    },
    async get(hashOrRef: string, opts: OperationOptions = {}) {
      return (await owns(hashOrRef, opts)) ? blobs.get(hashOrRef, opts) : null;
    },
    async stream(hashOrRef: string, opts: OperationOptions = {}) {
      return (await owns(hashOrRef, opts)) ? blobs.stream(hashOrRef, opts) : null;
    },
    async streamVerified(hashOrRef: string, opts: OperationOptions = {}) {
      return (await owns(hashOrRef, opts)) ? blobs.streamVerified(hashOrRef, opts) : null;
    },
    async has(hashOrRef: string, opts: OperationOptions = {}) {
      return (await owns(hashOrRef, opts)) && blobs.has(hashOrRef, opts);
    },
    async stat(hashOrRef: string, opts: OperationOptions = {}) {
      return (await owns(hashOrRef, opts)) ? blobs.stat(hashOrRef, opts) : null;
    },
    async verify(hashOrRef: string, opts: OperationOptions = {}) {
      if (!(await owns(hashOrRef, opts))) {
        throw new StowageError("NOT_FOUND", `blob ${toBlobHash(hashOrRef)} does not exist`);
      }
      return blobs.verify(hashOrRef, opts);
    },
    async delete(hashOrRef: string, opts: OperationOptions = {}) {
      await marks.delete(markKey(hashOrRef), opts);
    },
    async list(opts: { cursor?: string; limit?: number; signal?: AbortSignal } = {}) {
      const page = await marks.list({ ...opts, prefix: ownerPrefix });
      const items: BlobInfo[] = [];
      for (const mark of page.items) {
        const info = await blobs.stat(mark.key.slice(ownerPrefix.length), opts).catch(() => null);
        if (info) items.push(info);
      }
      return { items, cursor: page.cursor };
    },
    iterate: (opts: OperationOptions = {}) => ownedInfos(opts),
    uriFor(hashOrRef: string) {
      // An address says where the bytes are, not who may read them: a view never hands one out.
      toBlobHash(hashOrRef);
      return undefined;
    },
  };
  return Object.freeze(view);
}
