import {
  externalizeEntryPayloads,
  type MovedPayload,
  parseMovedPayloads,
  restoreEntryPayloads,
} from "@stowage/blob-store";
import { type ContentStore, describeValue, StowageError } from "@stowage/core";
import { checkStoredEntry, type SerializedEntry } from "./session-store-key.js";
import type { SessionStoreEntry } from "./types.js";

/**
 * Base64 characters from which an image or document payload moves to the blob store (blob-store's
 * threshold): no shorter JSON line can hold one, so shorter entries are not even walked.
 */
const MOVE_THRESHOLD = 1024;
/** Blobs a load reads at once (the S3 round trips overlap; the parts' own reads use 16 too). */
const BLOB_READ_CONCURRENCY = 16;

/** What a SessionStore takes to keep images and documents out of its entries. */
export interface SessionStorePayloadOptions {
  /**
   * Where image and document payloads of the entries go (a blob store, or one owner's view of
   * one): `append` moves them there and stores `blob:sha256:` refs, `load` puts them back exactly.
   */
  blobs?: ContentStore;
  /**
   * Whether `append` moves payloads to `blobs`; default true when `blobs` is given. With false,
   * appends keep them inline and loads still put back what earlier appends moved.
   */
  externalizePayloads?: boolean;
}

/** A store's checked payload options: where payloads are, and whether its appends move them. */
export interface EntryPayloads {
  blobs: ContentStore;
  externalize: boolean;
}

/** The payload options of `factory`'s options, checked; undefined when no blob store is given. */
export function entryPayloadsFrom(
  options: SessionStorePayloadOptions,
  factory: string,
): EntryPayloads | undefined {
  const { blobs, externalizePayloads } = options;
  if (externalizePayloads !== undefined && typeof externalizePayloads !== "boolean") {
    throw new StowageError(
      "INVALID_INPUT",
      `${factory}: externalizePayloads must be a boolean, got ${describeValue(externalizePayloads)}`,
    );
  }
  if (blobs === undefined) {
    if (externalizePayloads === true) {
      throw new StowageError("INVALID_INPUT", `${factory}: externalizePayloads needs a blob store in blobs`);
    }
    return undefined;
  }
  if (typeof blobs?.put !== "function" || typeof blobs.get !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `${factory}: blobs must be a ContentStore (a blob store, or an owner's view of one), got ${describeValue(blobs)}`,
    );
  }
  return { blobs, externalize: externalizePayloads ?? true };
}

/**
 * Moves the payloads of a serialized batch to the blob store: each entry whose payloads moved gets
 * its stored JSON text (refs in their places) and its `moved` list; the others are left as they
 * are. Resolves once every blob is stored, so a line that references one is never written before it.
 */
export async function moveEntryPayloads(
  payloads: EntryPayloads,
  batch: readonly SessionStoreEntry[],
  serialized: SerializedEntry[],
  signal: AbortSignal | undefined,
): Promise<void> {
  const candidates: number[] = [];
  for (let index = 0; index < serialized.length; index++)
    if (serialized[index]!.json.length >= MOVE_THRESHOLD) candidates.push(index);
  if (candidates.length === 0) return;
  const results = await externalizeEntryPayloads(
    candidates.map((index) => batch[index]),
    { blobs: payloads.blobs, threshold: MOVE_THRESHOLD, ...(signal ? { signal } : {}) },
  );
  for (const [position, result] of results.entries()) {
    if (!result) continue;
    const entry = serialized[candidates[position]!]!;
    entry.json = JSON.stringify(result.entry);
    entry.moved = result.moved;
  }
}

/**
 * Puts back, in place, the payloads that moved out of loaded `entries` (by index), from the blob
 * store. `where` names the transcript in errors: a missing blob is `INTEGRITY` / `MISSING_BLOB`
 * with the ref in `details.ref`; a transcript with moved payloads read by a store given no blob
 * store is `UNAVAILABLE` / `NO_BLOB_STORE`.
 */
export async function putBackEntryPayloads(
  payloads: EntryPayloads | undefined,
  entries: SessionStoreEntry[],
  moved: ReadonlyMap<number, readonly MovedPayload[]>,
  where: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (moved.size === 0) return;
  if (!payloads) {
    throw new StowageError(
      "UNAVAILABLE",
      `session store ${where}: its images and documents are in a blob store, and this store was given none (pass blobs)`,
      { reason: "NO_BLOB_STORE" },
    );
  }
  try {
    await restoreEntryPayloads(entries, moved, {
      blobs: payloads.blobs,
      concurrency: BLOB_READ_CONCURRENCY,
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    if (!StowageError.is(err, "INTEGRITY")) throw err;
    throw new StowageError("INTEGRITY", `session store ${where}: ${err.message}`, {
      cause: err,
      ...(err.reason ? { reason: err.reason } : {}),
      details: { ...err.details, key: where },
    });
  }
}

/**
 * An entry as one line of text for a backend that stores each entry on its own (a row): its JSON,
 * or, when payloads of it moved, `[<moved payloads>,<entry>]`. An array, never an entry: a reader
 * that does not know the form refuses the line rather than return refs where images were.
 */
export function storedEntryLine(entry: SerializedEntry): string {
  return entry.moved ? `[${JSON.stringify(entry.moved)},${entry.json}]` : entry.json;
}

/** An entry and the payloads that moved out of it. */
export interface StoredEntryLine {
  entry: SessionStoreEntry;
  moved: MovedPayload[] | undefined;
}

/**
 * A line {@link storedEntryLine} wrote, parsed and checked as `parseStoredEntry` checks an entry;
 * throws a plain error saying what is wrong, for the backend to report with where it read it.
 */
export function parseStoredEntryLine(line: string): StoredEntryLine {
  const value: unknown = JSON.parse(line);
  if (!Array.isArray(value)) return { entry: checkStoredEntry(value, line), moved: undefined };
  if (value.length !== 2)
    throw new Error(`an entry with moved payloads is [moved, entry], got ${describeValue(line)}`);
  return { entry: checkStoredEntry(value[1], line), moved: parseMovedPayloads(value[0]) };
}
