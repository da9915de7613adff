import {
  assertKeyDirectoryPrefix,
  describeValue,
  isSafeId,
  isSha256Hex,
  type ObjectStore,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import type { BlobStore } from "../blob-store.js";
import { assertMarksApart } from "../owned-blob-store.js";
import type { GcRun } from "./gc-steps.js";

/** Where owned views (`createOwnedBlobStore`) keep their marks: the view's `marks` and `prefix`. */
export interface OwnerMarksLocation {
  store: ObjectStore;
  /** `""` or ending in `/`. Default `""`. */
  prefix?: string;
}

/** A location checked: its prefix filled in. */
export interface OwnerMarks {
  store: ObjectStore;
  prefix: string;
}

/** Checks the `ownerMarks` option as `createOwnedBlobStore` checks a view's marks. */
export function ownerMarksLocations(value: unknown, blobs: BlobStore): OwnerMarks[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `ownerMarks must be a list of { store, prefix }, got ${describeValue(value)}`,
    );
  }
  return value.map((location: Partial<OwnerMarksLocation> | null) => {
    const store = location?.store;
    if (typeof store?.iterate !== "function" || typeof store.delete !== "function") {
      throw new StowageError(
        "INVALID_INPUT",
        `ownerMarks: each location needs an ObjectStore as its store, got ${describeValue(location)}`,
      );
    }
    const prefix = location?.prefix ?? "";
    assertKeyDirectoryPrefix(prefix, "ownerMarks prefix");
    // A prefix over the blobs would make blob keys (`2d/<hash>`) look like marks (`<owner>/<hash>`).
    assertMarksApart(blobs, store, prefix, "collectGarbage");
    return { store, prefix };
  });
}

const EMPTY = new Uint8Array(0);

/** The hash of a mark key (`<prefix><owner>/<hash>`), or null for any other key. */
function markedHash(key: string, prefix: string): string | null {
  const rest = key.slice(prefix.length);
  const slash = rest.indexOf("/");
  if (slash < 0) return null;
  const owner = rest.slice(0, slash);
  const hash = rest.slice(slash + 1);
  return isSafeId(owner) && isSha256Hex(hash) ? hash : null;
}

/**
 * The last step: marks of blobs that are gone (deleted by this run, or some other way) are
 * removed, so that no owner keeps a mark for bytes someone else may store later (the mark would
 * make them the owner's again, and tell the owner that someone stored them).
 *
 * An owned put writes its blob, then its mark, and an existing mark makes it write none: a put
 * whose bytes came back after the collection looked may rely on the mark it is removing. So the
 * mark is removed first and the blob looked at after: when a put's blob landed before that look,
 * the mark is put back; when it landed after, so did the put's mark, which the removal no longer
 * reaches. `scanned`: the blobs the run found; those it did not delete keep their marks unlooked at.
 */
export async function removeStaleOwnerMarks(run: GcRun, scanned: ReadonlySet<string>): Promise<void> {
  const { blobs, objects, signal, report } = run;
  const inTrash = async (hash: string) =>
    run.trashMs > 0 && (await objects.head(run.trashPrefix + hash, { signal })) !== null;
  // A blob in the trash keeps its owners' marks: restored, it is theirs again; purged, a later run
  // finds it gone and removes them.
  const gone = async (hash: string) => !(await blobs.has(hash, { signal })) && !(await inTrash(hash));
  for (const { store, prefix } of run.ownerMarks) {
    for await (const item of store.iterate({ prefix, signal })) {
      const hash = markedHash(item.key, prefix);
      if (hash === null || (scanned.has(hash) && !run.deletedHashes.has(hash))) continue;
      throwIfAborted(signal, "collectGarbage");
      const owner = item.key.slice(prefix.length, -hash.length - 1);
      if (run.dryRun) {
        // What would go to the trash keeps its marks.
        if (run.trashMs > 0 && run.deletedHashes.has(hash)) continue;
        if (run.deletedHashes.has(hash) || (await gone(hash))) report.staleOwnerMarks++;
        continue;
      }
      if (run.deletedHashes.has(hash) && (await inTrash(hash))) {
        run.onOwnerOfTrashed({ owner, hash });
        continue;
      }
      if (!(await gone(hash))) continue;
      await store.delete(item.key, { signal });
      if (await gone(hash)) {
        report.staleOwnerMarks++;
        run.onOwnerMarkRemoved({ owner, hash });
        continue;
      }
      await store.put(item.key, EMPTY, { ifNoneMatch: "*", signal }).catch((err: unknown) => {
        if (!StowageError.is(err, "ALREADY_EXISTS")) throw err; // the put wrote its own mark
      });
    }
  }
}
