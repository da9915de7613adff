import { concatBytes } from "@stowage/core";
import {
  newHeader,
  objectKeyFor,
  parseHeader,
  SEALED_HEADER_BYTES,
  SEALED_SEGMENT_BYTES,
  SEGMENT_BYTES,
  type SealedHeader,
  sealedSize,
  segmentOpener,
  segmentSealer,
} from "./sealed-format.js";

/** A data key: its hex id (written in every header) and its 32 bytes. */
export interface DataKey {
  id: string;
  key: Uint8Array;
}

/** Finds the data key a header names (FORBIDDEN when the deployment has none of that id). */
export type DataKeyLookup = (dataKeyId: string) => Promise<Uint8Array>;

/** `plaintext` sealed for `objectKey` under `dataKey`, in one buffer. */
export function sealBytes(dataKey: DataKey, objectKey: string, plaintext: Uint8Array): Uint8Array {
  const header = newHeader(dataKey.id);
  const key = objectKeyFor(dataKey.key, header);
  const sealSegment = segmentSealer(objectKey);
  const out = new Uint8Array(sealedSize(plaintext.byteLength));
  out.set(header.bytes, 0);
  let at = header.bytes.byteLength;
  let index = 0;
  for (let start = 0; ; start += SEGMENT_BYTES, index++) {
    const end = Math.min(start + SEGMENT_BYTES, plaintext.byteLength);
    const last = end === plaintext.byteLength;
    const [ciphertext, tag] = sealSegment(key, header, index, last, plaintext.subarray(start, end));
    out.set(ciphertext, at);
    out.set(tag, at + ciphertext.byteLength);
    at += ciphertext.byteLength + tag.byteLength;
    if (last) return out;
  }
}

/** Options of {@link openBytes}. */
export interface OpenBytesOptions {
  /**
   * The caller gives `sealed` up: the plaintext is written over it and a view of it returned,
   * instead of into a new buffer of the object's size. Default false.
   */
  overSealed?: boolean;
}

/** The plaintext of a whole sealed object; INTEGRITY when any of it does not authenticate. */
export async function openBytes(
  lookup: DataKeyLookup,
  objectKey: string,
  sealed: Uint8Array,
  options: OpenBytesOptions = {},
): Promise<Uint8Array> {
  const header = parseHeader(sealed, objectKey);
  const key = objectKeyFor(await lookup(header.dataKeyId), header);
  const openSegment = segmentOpener(objectKey);
  const parts: Uint8Array[] = [];
  let total = 0;
  for (let at = SEALED_HEADER_BYTES, index = 0; at < sealed.byteLength; at += SEALED_SEGMENT_BYTES, index++) {
    const end = Math.min(at + SEALED_SEGMENT_BYTES, sealed.byteLength);
    const part = openSegment(key, header, index, end === sealed.byteLength, sealed.subarray(at, end));
    // Over the sealed bytes, segment i's plaintext lands at i * SEGMENT_BYTES, before segment
    // i + 1's ciphertext begins (the header and each tag keep every ciphertext further on), and
    // only over ciphertext already opened. It saves a buffer of the object's size and the page
    // faults of filling it: opening a 20 MB transcript's parts took ~1,500 fewer faults a load
    // (2026-12-04). The header was copied by parseHeader.
    if (options.overSealed) sealed.set(part, total);
    else parts.push(part);
    total += part.byteLength;
  }
  return options.overSealed ? sealed.subarray(0, total) : concatBytes(parts, total);
}

/**
 * Cuts a byte stream into `size`-byte pieces, holding one piece back until more follows, so that
 * the one handed to `emit` with `last` true is known to be the final one (a stream's end is only
 * seen after its last chunk).
 */
function segmenter(size: number, emit: (piece: Uint8Array, last: boolean) => void | Promise<void>) {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  return {
    async push(chunk: Uint8Array): Promise<void> {
      pending.push(chunk);
      pendingBytes += chunk.byteLength;
      // Strictly more than one piece: the piece emitted is then certainly not the last.
      while (pendingBytes > size) {
        const joined = concatBytes(pending, pendingBytes);
        await emit(joined.subarray(0, size), false);
        pending = [joined.subarray(size)];
        pendingBytes -= size;
      }
    },
    async end(): Promise<void> {
      await emit(concatBytes(pending, pendingBytes), true);
    },
  };
}

/** `plaintext` sealed as it streams: memory stays at about two segments. */
export function sealStream(
  dataKey: DataKey,
  objectKey: string,
  plaintext: ReadableStream<Uint8Array>,
): ReadableStream<Uint8Array> {
  const header = newHeader(dataKey.id);
  const key = objectKeyFor(dataKey.key, header);
  const sealSegment = segmentSealer(objectKey);
  let index = 0;
  let controllerRef: TransformStreamDefaultController<Uint8Array> | undefined;
  const segments = segmenter(SEGMENT_BYTES, (piece, last) => {
    for (const part of sealSegment(key, header, index++, last, piece)) controllerRef!.enqueue(part);
  });
  return plaintext.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        controllerRef = controller;
        controller.enqueue(header.bytes);
      },
      transform: (chunk) => segments.push(chunk),
      flush: () => segments.end(),
    }),
  );
}

/** The plaintext of a sealed stream, each segment checked before its bytes are passed on. */
export function openStream(
  lookup: DataKeyLookup,
  objectKey: string,
  sealed: ReadableStream<Uint8Array>,
): ReadableStream<Uint8Array> {
  let headerBytes: Uint8Array[] = [];
  let headerLength = 0;
  let opened: { header: SealedHeader; key: Buffer } | undefined;
  let index = 0;
  let controllerRef: TransformStreamDefaultController<Uint8Array> | undefined;
  const openSegment = segmentOpener(objectKey);
  const segments = segmenter(SEALED_SEGMENT_BYTES, (piece, last) => {
    controllerRef!.enqueue(openSegment(opened!.key, opened!.header, index++, last, piece));
  });
  async function openHeader(): Promise<Uint8Array> {
    const joined = concatBytes(headerBytes, headerLength);
    const header = parseHeader(joined, objectKey);
    opened = { header, key: objectKeyFor(await lookup(header.dataKeyId), header) };
    headerBytes = [];
    return joined.subarray(SEALED_HEADER_BYTES);
  }
  return sealed.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        controllerRef = controller;
      },
      async transform(chunk) {
        if (opened) return segments.push(chunk);
        headerBytes.push(chunk);
        headerLength += chunk.byteLength;
        // The header and at least a tag: what `parseHeader` needs to tell a sealed object.
        if (headerLength < SEALED_HEADER_BYTES + 16) return;
        await segments.push(await openHeader());
      },
      async flush() {
        if (!opened) await segments.push(await openHeader());
        await segments.end();
      },
    }),
  );
}
