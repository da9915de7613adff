import type { ContentKind } from "../schemas/hot-state-schema.js";
import { canonicalJson } from "./canonical-json.js";

/** MIME type `storeText` records by default. */
export const TEXT_MIME = "text/plain; charset=utf-8";
/** MIME type `storeJson` records. */
export const JSON_MIME = "application/json";
/** MIME type of bytes that are not UTF-8 text. */
const BINARY_MIME = "application/octet-stream";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The bytes as UTF-8 text, or `null` when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Type and MIME type for a record rebuilt from content alone: what `storeJson` writes (canonical
 * JSON) is data, other UTF-8 text is a document, anything else binary data.
 */
export function sniffContent(bytes: Uint8Array): { type: ContentKind; mime: string } {
  const text = decodeUtf8(bytes);
  if (text === null) return { type: "data", mime: BINARY_MIME };
  try {
    if (canonicalJson(JSON.parse(text)) === text) return { type: "data", mime: JSON_MIME };
  } catch {
    // Not canonical JSON: plain text.
  }
  return { type: "doc", mime: TEXT_MIME };
}
