import { randomUUID } from "node:crypto";
import { formatBlobRef, StowageError, sha256Hex } from "@stowage/core";
import type { BlobContext } from "./blob-context.js";
import type { BlobPutResult } from "./blob-store.js";
import { hashingTransform } from "./hashing.js";

// The write protocol that garbage collection relies on (see collect-garbage.ts). A put never
// reports a blob it did not see stored at the moment it returned.
//
// Where a move keeps timestamps (fs, memory, PostgreSQL), a put that finds the blob refreshes its
// timestamp, and when the touch finds nothing (a collection moved the blob aside between the
// look and the touch) it writes the blob again; a collection sees a touch made before its move
// in the timestamp it moved.
//
// Where a move restamps (S3), that timestamp tells nothing, so a put writes a touch record
// instead (and touches nothing: on S3 a touch is a copy of the object). A byte put writes the
// record first, beside its first look, and then reads or writes the blob: a collection that
// moves the blob after the record finds the record, young, and puts it back, so a read that
// finds the blob, or a write, made after the record is final. A streamed put moves its staged
// bytes first and writes the record after, then looks again: a collection that moved the blob
// before the record shows in that look.

/**
 * Writes a `put` makes before it gives up (CONFLICT) when collections keep taking its blob away
 * between its write and its check; each round needs a collection that chose this very blob.
 */
const MAX_PUT_ROUNDS = 4;
const EMPTY = new Uint8Array(0);

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** A put that collections kept from storing its blob: by default, taken between write and check every round. */
function collectedDuringPut(
  hash: string,
  what = `was taken by garbage collections ${MAX_PUT_ROUNDS} times while it was being stored`,
  cause?: unknown,
): StowageError {
  return new StowageError("CONFLICT", `blob ${hash} ${what}; put it again`, {
    reason: "COLLECTED_DURING_PUT",
    details: { hash },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** True when the blob is at `key` after its touch record was written (always true where none is needed). */
async function stillStoredAfterRecord(
  { objects, keys, recordsTouches }: BlobContext,
  hash: string,
  key: string,
  signal?: AbortSignal,
): Promise<boolean> {
  if (!recordsTouches) return true;
  await objects.put(keys.touchRecordPrefix + hash, EMPTY, { signal });
  return (await objects.head(key, { signal })) !== null;
}

export async function putBytes(
  context: BlobContext,
  bytes: Uint8Array,
  signal?: AbortSignal,
): Promise<BlobPutResult> {
  const hash = sha256Hex(bytes);
  const key = context.keys.keyFor(hash);
  const put = context.recordsTouches ? putAfterRecord : putTouching;
  const created = await put(context, hash, key, bytes, signal);
  return { hash, ref: formatBlobRef(hash), size: bytes.byteLength, created };
}

/**
 * True when `key` holds exactly `bytes`. Compared, not trusted by existence or size: a corrupted
 * copy, even of the right size, is rewritten (repaired) by the put. Read only when the sizes
 * agree: `info` comes from a HEAD, which carries no body, so a copy of another size (or none) is
 * never read.
 */
async function holds(
  objects: BlobContext["objects"],
  key: string,
  info: { size: number } | null,
  bytes: Uint8Array,
  signal?: AbortSignal,
): Promise<boolean> {
  if (info?.size !== bytes.byteLength) return false;
  const stored = await objects.get(key, { signal });
  return stored !== null && sameBytes(stored, bytes);
}

/**
 * A byte put where moves keep timestamps (fs, memory, PostgreSQL): a stored copy is touched (a
 * fresh timestamp); when the touch finds nothing, or there was no copy, the blob is written. A
 * plain write: a concurrent writer of the same hash writes the same bytes, so whichever lands
 * last leaves identical content. True when the put wrote the blob.
 */
async function putTouching(
  { objects }: BlobContext,
  _hash: string,
  key: string,
  bytes: Uint8Array,
  signal?: AbortSignal,
): Promise<boolean> {
  const info = await objects.head(key, { signal });
  if ((await holds(objects, key, info, bytes, signal)) && (await objects.touch(key, { signal })))
    return false;
  await objects.put(key, bytes, { signal });
  return true;
}

/**
 * A byte put where moves restamp (S3): two round trips, the touch record beside the first look,
 * then the read that compares or the write, both after the record. On S3 the record is itself a
 * PUT, as slow as the blob's: a record after the write and a look after the record made four
 * round trips where two do. True when the put wrote the blob.
 */
async function putAfterRecord(
  { objects, keys }: BlobContext,
  hash: string,
  key: string,
  bytes: Uint8Array,
  signal?: AbortSignal,
): Promise<boolean> {
  const [info] = await Promise.all([
    objects.head(key, { signal }),
    objects.put(keys.touchRecordPrefix + hash, EMPTY, { signal }),
  ]);
  // The HEAD may have been answered before the record landed; the GET that compares comes after it.
  if (await holds(objects, key, info, bytes, signal)) return false;
  await objects.put(key, bytes, { signal });
  return true;
}

export async function putStream(
  context: BlobContext,
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): Promise<BlobPutResult> {
  const { objects, keys } = context;
  // The key depends on the hash, known only at the end: stage the bytes, then move them. The
  // move replaces a stored copy with the staged bytes, which hash right by construction: it is
  // the touch (a fresh timestamp) and the repair of a corrupted copy in one step.
  const stagingKey = keys.stagingPrefix + randomUUID();
  const hashing = hashingTransform();
  await objects.put(stagingKey, body.pipeThrough(hashing.transform), { signal });
  const { hash, size } = hashing.result();
  const key = keys.keyFor(hash);
  let moved: { created: boolean };
  try {
    moved = await objects.move(stagingKey, key, { signal });
  } catch (err) {
    await objects.delete(stagingKey).catch(() => {});
    // The staged bytes were removed under the put (a collection with a `stagingGraceMs` shorter
    // than the put's pause): the stream is consumed, so only the caller can put it again.
    if (StowageError.is(err, "NOT_FOUND")) {
      throw collectedDuringPut(
        hash,
        "was not stored: its staged bytes were removed by a garbage collection before they could be moved",
        err,
      );
    }
    throw err;
  }
  const result = { hash, ref: formatBlobRef(hash), size, created: moved.created };
  for (let round = 1; round <= MAX_PUT_ROUNDS; round++) {
    if (await stillStoredAfterRecord(context, hash, key, signal)) return result;
    // A collection moved the blob aside after the move and before the record: the staged bytes
    // are gone, so its aside copy (the same bytes) is put back. Gone too when that collection
    // already deleted it, and then the put fails rather than report a blob that is not there.
    await putBackAside(context, hash, key, signal);
  }
  throw collectedDuringPut(hash);
}

async function putBackAside(
  { objects, keys }: BlobContext,
  hash: string,
  key: string,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await objects.move(keys.asidePrefix + hash, key, { ifNoneMatch: "*", signal });
  } catch (err) {
    if (!StowageError.is(err, "ALREADY_EXISTS") && !StowageError.is(err, "NOT_FOUND")) throw err;
  }
}
