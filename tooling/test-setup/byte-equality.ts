import { expect } from "vitest";

/**
 * Compares two byte arrays of one kind (two Buffers, two Uint8Arrays) as bytes, at memcmp speed.
 * Vitest's own `toEqual` walks a byte array element by element as it would an array of objects:
 * 4 s of CPU for one MiB on a quiet machine. Tests here compare files, blobs and archives of
 * megabytes by the dozen, and a test holding its worker's event loop that long let an app's
 * keep-alive timer close a connection its next request was already on (ECONNRESET in CI).
 * Arrays of different kinds are left to Vitest, so `toStrictEqual` still tells a Buffer from a
 * Uint8Array.
 */
function sameBytes(a: unknown, b: unknown): boolean | undefined {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array)) return undefined;
  if (a.constructor !== b.constructor) return undefined;
  return Buffer.compare(a, b) === 0;
}

expect.addEqualityTesters([sameBytes]);
