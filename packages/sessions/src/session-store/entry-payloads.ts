import {
  type ExternalizedEntry,
  findEntryPayloads,
  type MovedPayload,
  parseMovedPayloads,
  restoreEntryPayloads,
} from "@stowage/blob-store";
import { type ContentStore, describeValue, mapConcurrent, StowageError } from "@stowage/core";
import { checkStoredEntry, type SerializedEntry } from "./session-store-key.js";
import type { SessionStoreEntry } from "./types.js";

/**
 * Base64 characters from which an image or document payload moves to the blob store (blob-store's
 * threshold): no shorter JSON line can hold one, so shorter entries are not even walked.
 */
const MOVE_THRESHOLD = 1024;
/** Blobs stored at once. */
const BLOB_PUT_CONCURRENCY = 8;
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

/** Indexes of the entries of a batch long enough to hold a payload. */
function payloadCandidates(serialized: readonly SerializedEntry[]): number[] {
  const candidates: number[] = [];
  for (let index = 0; index < serialized.length; index++)
    if (serialized[index]!.json.length >= MOVE_THRESHOLD) candidates.push(index);
  return candidates;
}

/** Gives each candidate entry whose payloads moved its stored JSON text (refs in their places) and its `moved` list. */
function rewriteMoved(
  serialized: SerializedEntry[],
  candidates: readonly number[],
  results: readonly (ExternalizedEntry<unknown> | undefined)[],
): void {
  for (const [position, result] of results.entries()) {
    if (!result) continue;
    const entry = serialized[candidates[position]!]!;
    entry.json = JSON.stringify(result.entry);
    entry.moved = result.moved;
  }
}

/**
 * Stores payloads (bytes by SHA-256) in `blobs`, each once, {@link BLOB_PUT_CONCURRENCY} at a
 * time; `INTEGRITY` when the store files bytes under another hash than theirs.
 */
export async function storePayloads(
  blobs: Pick<ContentStore, "put">,
  payloads: Iterable<readonly [string, Uint8Array]>,
  signal: AbortSignal | undefined,
): Promise<void> {
  await mapConcurrent(
    [...payloads],
    BLOB_PUT_CONCURRENCY,
    async ([sha256, bytes]) => {
      const stored = await blobs.put(bytes, signal ? { signal } : {});
      if (stored.hash !== sha256) {
        throw new StowageError(
          "INTEGRITY",
          `blob store returned hash ${stored.hash} for bytes hashing to ${sha256}`,
        );
      }
    },
    signal,
  );
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
  await storePayloads(payloads.blobs, takeEntryPayloads(batch, serialized), signal);
}

/**
 * Takes the payloads out of a serialized batch as {@link moveEntryPayloads} does, storing nothing:
 * the bytes of each distinct payload, by SHA-256, for the part that refers to them to hold.
 */
export function takeEntryPayloads(
  batch: readonly SessionStoreEntry[],
  serialized: SerializedEntry[],
): Map<string, Uint8Array> {
  const candidates = payloadCandidates(serialized);
  if (candidates.length === 0) return new Map();
  const found = findEntryPayloads(
    candidates.map((index) => batch[index]),
    { threshold: MOVE_THRESHOLD },
  );
  rewriteMoved(serialized, candidates, found.entries);
  return found.payloads;
}

function noBlobStore(where: string): StowageError {
  return new StowageError(
    "UNAVAILABLE",
    `session store ${where}: its images and documents are in a blob store, and this store was given none (pass blobs)`,
    { reason: "NO_BLOB_STORE" },
  );
}

/**
 * Puts back, in place, the payloads that moved out of loaded `entries` (by index), from the bytes
 * the transcript's parts hold (`held`, checked when read) or else the blob store. `where` names
 * the transcript in errors: a missing blob is `INTEGRITY` / `MISSING_BLOB` with the ref in
 * `details.ref`; a payload neither held nor readable because the store was given no blob store is
 * `UNAVAILABLE` / `NO_BLOB_STORE`.
 */
export async function putBackEntryPayloads(
  payloads: EntryPayloads | undefined,
  entries: SessionStoreEntry[],
  moved: ReadonlyMap<number, readonly MovedPayload[]>,
  where: string,
  signal: AbortSignal | undefined,
  held: ReadonlyMap<string, Uint8Array> = new Map(),
): Promise<void> {
  if (moved.size === 0) return;
  const blobs = payloads?.blobs;
  try {
    await restoreEntryPayloads(entries, moved, {
      blobs: {
        get: async (sha256, options) => {
          const bytes = held.get(sha256);
          if (bytes) return bytes;
          if (!blobs) throw noBlobStore(where);
          return blobs.get(sha256, options);
        },
      },
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
