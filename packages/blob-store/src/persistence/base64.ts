// Characters whose low bits are zero, so that they can end canonical base64 before padding.
const LAST_BEFORE_TWO_PADS = new Set("AQgw");
const LAST_BEFORE_ONE_PAD = new Set("AEIMQUYcgkosw048");

/**
 * Decodes canonical standard base64, or returns null. Canonical means that encoding the result
 * again gives back exactly `text`, so externalizing and resolving an image is lossless.
 */
export function decodeCanonicalBase64(text: string): Uint8Array | null {
  if (text.length === 0 || text.length % 4 !== 0) return null;
  // Node's decoder also takes the URL-safe alphabet, which would not round-trip.
  if (text.includes("-") || text.includes("_")) return null;
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const last = text[text.length - 1 - padding]!;
  if (padding === 2 && !LAST_BEFORE_TWO_PADS.has(last)) return null;
  if (padding === 1 && !LAST_BEFORE_ONE_PAD.has(last)) return null;
  const bytes = Buffer.from(text, "base64");
  // Characters outside the alphabet are skipped by the decoder, which shows as a short result.
  if (bytes.byteLength !== (text.length / 4) * 3 - padding) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}
