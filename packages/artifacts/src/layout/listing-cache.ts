import { statSync } from "node:fs";
import { readDirectoryNames } from "./listing.js";

/**
 * How long before a listing a directory must have last changed for the listing to be kept. A
 * directory's change time comes from a coarse clock (a few milliseconds on Linux, two seconds on
 * FAT): a file added in the same tick as the change before it leaves the time as it was, so a
 * listing taken in that tick cannot be trusted to stay whole ("racy", as git calls it).
 */
const SETTLED_MS = 2_000;

interface Snapshot<T> extends DirectoryState {
  value: T;
}

/**
 * A directory's listing, parsed once and kept while the directory stays as it was: same device,
 * inode, modification and change times. Every name added, removed or renamed changes the
 * directory's times, so a kept listing is what `readdir` would return now; a listing of a directory
 * that changed less than {@link SETTLED_MS} before is never kept. A stat costs far less than
 * listing (and parsing) a directory of many artifacts for every read.
 */
export class DirectoryListingCache<T> {
  #snapshot: Snapshot<T> | null = null;

  constructor(private readonly parse: (names: readonly string[]) => T) {}

  /**
   * The parsed listing of `path` (the directory as opened for this read), or null when it is
   * missing. `fresh` lists it again whatever is kept (after a listed file could not be opened).
   */
  async read(path: string, context: string, fresh = false): Promise<T | null> {
    const before = statDirectory(path);
    const kept = this.#snapshot;
    if (!fresh && kept !== null && before !== null && sameDirectoryState(kept, before)) return kept.value;
    const listedAt = Date.now();
    const names = await readDirectoryNames(path, context);
    if (names === null) return null;
    const value = this.parse(names);
    const settled =
      before !== null && before.mtimeMs < listedAt - SETTLED_MS && before.ctimeMs < listedAt - SETTLED_MS;
    this.#snapshot = settled ? { ...before, value } : null;
    return value;
  }
}

interface DirectoryState {
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  mtimeMs: number;
  ctimeMs: number;
}

function sameDirectoryState(a: DirectoryState, b: DirectoryState): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/**
 * The directory's identity and times; null when it cannot be stat'ed (listing it then reports
 * why). Synchronous, like the opening of the directory before it (core's openDirectoryBeneath):
 * a stat of a directory just opened answers from the inode cache, far sooner than a trip through
 * the thread pool.
 */
function statDirectory(path: string): DirectoryState | null {
  try {
    const info = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (info === undefined) return null;
    if (!info.isDirectory()) return null;
    return {
      dev: info.dev,
      ino: info.ino,
      mtimeNs: info.mtimeNs,
      ctimeNs: info.ctimeNs,
      mtimeMs: Number(info.mtimeMs),
      ctimeMs: Number(info.ctimeMs),
    };
  } catch {
    return null;
  }
}
