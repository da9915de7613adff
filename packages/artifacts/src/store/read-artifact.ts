import { StowageError, sanitizeText, throwIfAborted } from "@stowage/core";
import type { DirectoryLocation } from "../layout/directory-access.js";
import {
  describeAvailable,
  MAX_LISTED_IDS,
  noArtifactsDirectory,
  readDirectoryNames,
} from "../layout/listing.js";
import { DirectoryListingCache } from "../layout/listing-cache.js";
import { assertArtifactId, parseArtifactFileName } from "../layout/names.js";
import { type OpenedRegularFile, openRegularFile } from "../read/open-regular-file.js";
import { readLines, readWhole } from "../read/read-lines.js";
import { checkReadOptions, type LineRange, type ReadOptions } from "../read/read-options.js";

/** Listing and opening race a writer that renames `.partial` away: this many attempts, then UNAVAILABLE. */
const LOOKUP_ATTEMPTS = 3;

const decoder = new TextDecoder("utf-8");

export interface ArtifactReadOptions extends ReadOptions {
  /**
   * Return the output so far of an artifact still being written (`complete: false` in the
   * result) instead of failing with UNAVAILABLE (reason `ARTIFACT_INCOMPLETE`). Default false.
   */
  allowIncomplete?: boolean;
  /**
   * Return the text as the tool wrote it (decoded, invalid UTF-8 replaced) instead of sanitized
   * by `sanitizeText` (`@stowage/core`) for a model. Default false: what is read goes to a model or a viewer.
   */
  raw?: boolean;
}

export interface ArtifactRead {
  id: string;
  toolType: string;
  /** False only for an artifact still being written, read with `allowIncomplete`. */
  complete: boolean;
  text: string;
  /** Set for a paged read (`offset`/`limit`). */
  lines?: LineRange;
}

export interface ArtifactEntry {
  id: string;
  toolType: string;
  /** False while the tool is still writing it (or its writer stopped before finishing). */
  complete: boolean;
  fileName: string;
}

/** The tool outputs in `dir`, by increasing id; empty when the directory does not exist. */
export async function listArtifactEntries(dir: string): Promise<ArtifactEntry[]> {
  const names = (await readDirectoryNames(dir, "list artifacts")) ?? [];
  return entriesIn(names);
}

/** A store's kept listing of its tool outputs, reused by reads while the directory is unchanged. */
export function createArtifactListing(): DirectoryListingCache<ArtifactEntry[]> {
  return new DirectoryListingCache(entriesIn);
}

function entriesIn(names: readonly string[]): ArtifactEntry[] {
  const entries: Array<ArtifactEntry & { n: number }> = [];
  for (const fileName of names) {
    const parsed = parseArtifactFileName(fileName);
    if (parsed)
      entries.push({
        id: String(parsed.id),
        n: parsed.id,
        toolType: parsed.toolType,
        complete: parsed.complete,
        fileName,
      });
  }
  entries.sort((a, b) => a.n - b.n || Number(b.complete) - Number(a.complete));
  return entries.map(({ n: _, ...entry }) => entry);
}

function notFound(id: string, entries: readonly ArtifactEntry[]): StowageError {
  const available = entries.filter((entry) => entry.complete).map((entry) => entry.id);
  const running = entries.filter((entry) => !entry.complete).map((entry) => entry.id);
  const runningNote = running.length > 0 ? `; still being written: ${describeAvailable(running)}` : "";
  return new StowageError(
    "NOT_FOUND",
    `artifact ${id} not found. Available ids: ${describeAvailable(available)}${runningNote}`,
    {
      reason: "ARTIFACT_NOT_FOUND",
      details: { id, available: available.slice(0, MAX_LISTED_IDS) },
    },
  );
}

/** A tool output found by id and open for reading; the caller closes `file.handle`. */
export interface OpenedArtifact {
  entry: ArtifactEntry;
  file: OpenedRegularFile;
}

/**
 * Finds `artifact://<id>` in `dir` by exact file name (`<id>.<toolType>.log`), never by prefix,
 * and opens it without following links. One still being written is UNAVAILABLE (reason
 * `ARTIFACT_INCOMPLETE`) unless `allowIncomplete`. `listing` is the store's kept listing: the
 * directory is listed again only when it changed (or a listed file could not be opened).
 */
export async function openArtifact(
  location: DirectoryLocation,
  id: string,
  options: { allowIncomplete?: boolean; signal?: AbortSignal | undefined },
  listing: DirectoryListingCache<ArtifactEntry[]>,
): Promise<OpenedArtifact> {
  const { path: dir } = location;
  if (dir === null) throw noArtifactsDirectory();
  const what = `artifact ${id}`;
  for (let attempt = 0; attempt < LOOKUP_ATTEMPTS; attempt++) {
    throwIfAborted(options.signal, `read ${what}`);
    const entries = await listing.read(dir, `read ${what}`, attempt > 0);
    if (entries === null) throw noArtifactsDirectory();
    const matches = entries.filter((entry) => entry.id === id);
    const complete = matches.filter((entry) => entry.complete);
    if (complete.length > 1) {
      throw new StowageError(
        "CONFLICT",
        `${what} is ambiguous: ${complete.map((entry) => entry.fileName).join(", ")}`,
        {
          reason: "AMBIGUOUS_ARTIFACT",
        },
      );
    }
    const target = complete[0] ?? matches[0];
    if (!target) throw notFound(id, entries);
    if (!target.complete && options.allowIncomplete !== true) {
      throw new StowageError(
        "UNAVAILABLE",
        `${what} is still being written (its tool is running, or stopped before finishing); read it again once the tool is done, or pass allowIncomplete to see the output so far`,
        { reason: "ARTIFACT_INCOMPLETE", details: { id } },
      );
    }
    const file = await openRegularFile(dir, target.fileName, what);
    if (file) return { entry: target, file };
    // Renamed (published) or removed since the listing: look again.
  }
  throw new StowageError("UNAVAILABLE", `${what} kept changing while it was being opened; try again`, {
    reason: "ARTIFACT_CHANGING",
  });
}

/**
 * Reads `artifact://<id>` from `dir` (found and opened by {@link openArtifact}). A page
 * (`offset`/`limit`) is read by scanning lines (of the raw file), never by loading the file. The
 * text is sanitized unless `raw`.
 */
export async function readArtifact(
  location: DirectoryLocation,
  idValue: unknown,
  options: ArtifactReadOptions = {},
  listing: DirectoryListingCache<ArtifactEntry[]> = createArtifactListing(),
): Promise<ArtifactRead> {
  const id = assertArtifactId(idValue);
  const { page, maxBytes } = checkReadOptions(options);
  const what = `artifact ${id}`;
  const { entry, file } = await openArtifact(location, id, options, listing);
  try {
    const result: ArtifactRead = { id, toolType: entry.toolType, complete: entry.complete, text: "" };
    const show = (bytes: Uint8Array) =>
      options.raw === true ? decoder.decode(bytes) : sanitizeText(decoder.decode(bytes));
    if (page) {
      const read = await readLines(file.handle, page, maxBytes, what, options.signal);
      result.text = show(read.bytes);
      result.lines = read.lines;
    } else {
      result.text = show(await readWhole(file.handle, maxBytes, what, options.signal, file.size));
    }
    return result;
  } finally {
    await file.handle.close().catch(() => {});
  }
}
