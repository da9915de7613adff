import { type OperationOptions, StowageError, sha256Hex } from "@stowage/core";
import { type BlobContext, blobInfo } from "./blob-context.js";
import { toBlobHash } from "./blob-hash.js";
import type { BlobInfo } from "./blob-store.js";
import { hashingTransform } from "./hashing.js";

/** Times a read looks at a blob's key and its aside key before it reports the blob absent. */
const READ_ROUNDS = 2;

function integrityError(hash: string, actual: string, key: string): StowageError {
  return new StowageError("INTEGRITY", `blob ${hash} is corrupted: its bytes hash to ${actual}`, {
    details: { expected: hash, actual, key },
  });
}

/** `source` passed through, erroring with INTEGRITY at its end unless its bytes hash to `hash`. */
function verifying(source: ReadableStream<Uint8Array>, hash: string, key: string) {
  const hashing = hashingTransform((digest) =>
    digest.hash === hash ? undefined : integrityError(hash, digest.hash, key),
  );
  return { stream: source.pipeThrough(hashing.transform), digest: hashing.result };
}

/** Reads a stream to its end; a verifying stream errors with INTEGRITY there on a mismatch. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  for await (const _chunk of stream as unknown as AsyncIterable<Uint8Array>);
}

// While a garbage collection decides about a blob it is moved aside; reads find it there. A
// blob moves between the two keys (aside, then back), so each is looked at twice before a read
// reports it absent.
async function readFrom<T>(
  { keys }: BlobContext,
  hash: string,
  read: (key: string) => Promise<T | null>,
): Promise<T | null> {
  for (let round = 0; round < READ_ROUNDS; round++) {
    const found = (await read(keys.keyFor(hash))) ?? (await read(keys.asidePrefix + hash));
    if (found) return found;
  }
  return null;
}

const readStream = (context: BlobContext, hash: string, opts: OperationOptions) =>
  readFrom(context, hash, (key) => context.objects.stream(key, opts));

export async function getBlob(
  context: BlobContext,
  hashOrRef: string,
  opts: OperationOptions = {},
): Promise<Uint8Array | null> {
  const hash = toBlobHash(hashOrRef);
  const key = context.keys.keyFor(hash);
  const bytes = await readFrom(context, hash, (at) => context.objects.get(at, opts));
  if (bytes && context.verifyReads) {
    const actual = sha256Hex(bytes);
    if (actual !== hash) throw integrityError(hash, actual, key);
  }
  return bytes;
}

export async function streamBlob(
  context: BlobContext,
  hashOrRef: string,
  opts: OperationOptions = {},
): Promise<ReadableStream<Uint8Array> | null> {
  const hash = toBlobHash(hashOrRef);
  const key = context.keys.keyFor(hash);
  const source = await readStream(context, hash, opts);
  if (!source || !context.verifyReads) return source;
  return verifying(source, hash, key).stream;
}

export async function streamVerifiedBlob(
  context: BlobContext,
  hashOrRef: string,
  opts: OperationOptions = {},
): Promise<ReadableStream<Uint8Array> | null> {
  const hash = toBlobHash(hashOrRef);
  const key = context.keys.keyFor(hash);
  const first = await readStream(context, hash, opts);
  if (!first) return null;
  await drain(verifying(first, hash, key).stream);
  const source = await readStream(context, hash, opts);
  // Deleted between the two reads: as absent as it is now.
  return source && verifying(source, hash, key).stream;
}

export async function statBlob(
  context: BlobContext,
  hashOrRef: string,
  opts: OperationOptions = {},
): Promise<BlobInfo | null> {
  const hash = toBlobHash(hashOrRef);
  const head = await readFrom(context, hash, (key) => context.objects.head(key, opts));
  return head ? blobInfo(hash, head.size, head.lastModified) : null;
}

export async function verifyBlob(
  context: BlobContext,
  hashOrRef: string,
  opts: OperationOptions = {},
): Promise<{ hash: string; size: number }> {
  const hash = toBlobHash(hashOrRef);
  const key = context.keys.keyFor(hash);
  const source = await readStream(context, hash, opts);
  if (!source) throw new StowageError("NOT_FOUND", `blob ${hash} does not exist`);
  const { stream: checked, digest } = verifying(source, hash, key);
  await drain(checked);
  return { hash, size: digest().size };
}
