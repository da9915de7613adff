/** Decoded size of a base64 payload, from its length and padding (no decoding). */
export function base64DecodedBytes(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}

/**
 * Text standing in for an image in a brief or a tool output: `[image: image/png, 48,213 bytes]`.
 * Thread items carry text; the image bytes stay in the agent's own transcript.
 */
export function imagePlaceholder(mediaType: unknown, base64: unknown): string {
  const type = typeof mediaType === "string" && /^[\w.+-]+\/[\w.+-]+$/.test(mediaType) ? mediaType : "image";
  if (typeof base64 !== "string") return `[image: ${type}]`;
  return `[image: ${type}, ${base64DecodedBytes(base64).toLocaleString("en-US")} bytes]`;
}

/** The media type and base64 payload of a `data:` URL, or undefined when it is not a base64 data URL. */
export function parseDataUrl(url: unknown): { mediaType: string; base64: string } | undefined {
  if (typeof url !== "string" || !url.startsWith("data:")) return undefined;
  const comma = url.indexOf(",");
  const header = url.slice(5, comma);
  if (comma === -1 || !header.endsWith(";base64")) return undefined;
  return { mediaType: header.slice(0, -";base64".length), base64: url.slice(comma + 1) };
}
