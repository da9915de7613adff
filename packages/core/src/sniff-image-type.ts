/** Image formats told from their first bytes: the signature, and where it starts. */
const SIGNATURES: readonly { type: string; bytes: readonly number[]; offset?: number }[] = [
  { type: "image/png", bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: "image/jpeg", bytes: [0xff, 0xd8, 0xff] },
  { type: "image/gif", bytes: [0x47, 0x49, 0x46, 0x38] },
  // RIFF….WEBP: the container tag at 0, the format tag at 8.
  { type: "image/webp", bytes: [0x57, 0x45, 0x42, 0x50], offset: 8 },
];
const RIFF = [0x52, 0x49, 0x46, 0x46];

const startsWith = (bytes: Uint8Array, signature: readonly number[], offset = 0) =>
  bytes.byteLength >= offset + signature.length && signature.every((byte, i) => bytes[offset + i] === byte);

/**
 * The image MIME type that `bytes` begin with (PNG, JPEG, GIF, WebP), or undefined. For serving
 * stored bytes that carry no type of their own: anything else should go out as a download.
 */
export function sniffImageType(bytes: Uint8Array): string | undefined {
  for (const { type, bytes: signature, offset } of SIGNATURES) {
    if (type === "image/webp" && !startsWith(bytes, RIFF)) continue;
    if (startsWith(bytes, signature, offset)) return type;
  }
  return undefined;
}
