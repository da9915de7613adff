import { describeValue, StowageError, throwIfAborted } from "@stowage/core";
import { toBlobHash } from "../blob-hash.js";

/** Refs (or hashes) in use: a list, or an async source such as a file scan. */
export type BlobRoots = Iterable<string> | AsyncIterable<string>;

/**
 * One place refs live, named for reports and errors: session files, artifacts, thread logs,
 * stored session blobs, content refs, uploads. `refs` is called once per reading of the roots (a
 * collection reads them twice), and must throw when its place cannot be read completely.
 */
export interface BlobRootSource {
  /** Shown in the report's `rootRefsBySource` and in the error when the source fails. */
  name: string;
  refs: () => BlobRoots;
}

/** What `collectGarbage` accepts as `roots`: named sources, a function returning refs, or a re-readable list. */
export type BlobRootsOption = readonly BlobRootSource[] | BlobRoots | (() => BlobRoots);

/** The hashes the roots reference, with how many distinct hashes each source gave. */
export interface RootSet {
  hashes: Set<string>;
  bySource: Record<string, number>;
}

function isSourceList(roots: unknown): roots is readonly BlobRootSource[] {
  return (
    Array.isArray(roots) &&
    roots.length > 0 &&
    roots.every((source) => typeof source === "object" && source !== null && "refs" in source)
  );
}

/** A one-shot iterator (a generator object) cannot be read a second time. */
function isOneShot(roots: unknown): boolean {
  return typeof (roots as { next?: unknown })?.next === "function";
}

/**
 * Checks `roots` and returns the sources to read. Everything is checked before anything is read:
 * a source list with a bad entry, or a one-shot iterator (the collection reads the roots twice),
 * is INVALID_INPUT.
 */
export function rootSources(roots: unknown): BlobRootSource[] {
  if (isSourceList(roots)) {
    const names = new Set<string>();
    for (const source of roots) {
      if (typeof source.name !== "string" || source.name === "" || typeof source.refs !== "function") {
        throw new StowageError(
          "INVALID_INPUT",
          `a root source must be { name: non-empty string, refs: () => refs }, got ${describeValue(source)}`,
        );
      }
      if (names.has(source.name)) {
        throw new StowageError("INVALID_INPUT", `root source ${describeValue(source.name)} is given twice`);
      }
      names.add(source.name);
    }
    return [...roots];
  }
  if (typeof roots === "function") return [{ name: "roots", refs: roots as () => BlobRoots }];
  if (isOneShot(roots)) {
    throw new StowageError(
      "INVALID_INPUT",
      "roots must be readable twice (garbage collection reads them again before deleting): pass a function that returns the refs, such as () => scanFilesForBlobRefs(dir), or named root sources",
      { reason: "ROOTS_NOT_REPEATABLE" },
    );
  }
  const iterable = roots as BlobRoots | null | undefined;
  if (
    typeof (iterable as Iterable<string>)?.[Symbol.iterator] !== "function" &&
    typeof (iterable as AsyncIterable<string>)?.[Symbol.asyncIterator] !== "function"
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `roots must be root sources, a function returning refs, or a list of refs, got ${describeValue(roots)}`,
    );
  }
  return [{ name: "roots", refs: () => iterable as BlobRoots }];
}

/**
 * Reads every source completely. A source that fails stops the collection: UNAVAILABLE (reason
 * `ROOTS_UNREADABLE`, `details.source` naming it), never an empty or partial root set. A ref that
 * is not a ref is INVALID_INPUT; an abort is ABORTED.
 */
export async function readRoots(sources: readonly BlobRootSource[], signal?: AbortSignal): Promise<RootSet> {
  const hashes = new Set<string>();
  const bySource: Record<string, number> = {};
  for (const source of sources) {
    const own = new Set<string>();
    try {
      for await (const root of source.refs()) {
        throwIfAborted(signal, "collectGarbage");
        own.add(toBlobHash(root));
      }
    } catch (err) {
      if (StowageError.is(err, "INVALID_INPUT") || StowageError.is(err, "ABORTED")) throw err;
      const why = err instanceof Error ? err.message : describeValue(err);
      throw new StowageError(
        "UNAVAILABLE",
        `garbage collection stopped, nothing was deleted: root source ${describeValue(source.name)} could not be read (${why})`,
        { cause: err, reason: "ROOTS_UNREADABLE", details: { source: source.name } },
      );
    }
    bySource[source.name] = own.size;
    for (const hash of own) hashes.add(hash);
  }
  return { hashes, bySource };
}
