import { parseDataUrl as parseAnyDataUrl, parseBlobRef, parseContentType } from "@stowage/core";

const NOT_BASE64_DIGIT = /[^A-Za-z0-9+/_-]/g;

/**
 * Decoded size of a base64 payload, from its digits (no decoding). Padding, line breaks and other
 * characters outside both alphabets do not count, so line-wrapped, URL-safe and unpadded base64
 * are measured right.
 */
function base64DecodedBytes(base64: string): number {
  const digits = base64.length - (base64.match(NOT_BASE64_DIGIT)?.length ?? 0);
  return Math.floor((digits * 3) / 4);
}

/**
 * Text standing in for an image in a brief or a tool output: `[image: image/png, 48,213 bytes]`.
 * Thread items carry text; the image bytes stay in the agent's own transcript. A payload already
 * moved to a blob store is named by its ref, so that a reader can show it from there:
 * `[image: image/png, blob:sha256:<hex>]`. The ref says nothing about the size, so none is given
 * unless the caller knows it (`knownBytes`, e.g. the size a tool reported).
 */
export function imagePlaceholder(mediaType: unknown, payload: unknown, knownBytes?: number): string {
  const type = parseContentType(mediaType)?.essence ?? "image";
  const ref = parseBlobRef(payload);
  const bytes =
    knownBytes !== undefined
      ? knownBytes
      : typeof payload === "string" && ref === null
        ? base64DecodedBytes(payload)
        : undefined;
  const parts = [
    type,
    ...(bytes === undefined ? [] : [`${bytes.toLocaleString("en-US")} bytes`]),
    ...(ref === null ? [] : [`blob:sha256:${ref}`]),
  ];
  return `[image: ${parts.join(", ")}]`;
}

/**
 * The media type (`""` when the URL names none) and payload of a base64 `data:` URL, or undefined
 * when `url` is not one. Read by core's `parseDataUrl`, as the blob store reads it.
 */
export function parseDataUrl(url: unknown): { mediaType: string; base64: string } | undefined {
  const parsed = parseAnyDataUrl(url);
  if (!parsed?.base64) return undefined;
  return { mediaType: parsed.mediaType ?? "", base64: parsed.payload };
}
