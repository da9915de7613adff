import { parseContentType } from "./content-type.js";

/** A `data:` URL split at its comma; nothing is decoded. */
export interface DataUrl {
  /** `data:` up to and including the comma, exactly as written (`data:IMAGE/PNG;name=a.png;BASE64,`). */
  header: string;
  /**
   * The lowercase `type/subtype` the URL names (`image/png`), or undefined when it names none
   * (`data:;base64,…`) or one that is not a MIME type. Parameters are not checked: they stay in
   * `header` as written.
   */
  mediaType: string | undefined;
  /** True when the header ends in `;base64` (any case, spaces allowed after the `;`). */
  base64: boolean;
  /** Everything after the comma, as written. */
  payload: string;
}

// `data:` + a content type of at most 255 characters + `;base64`, with room for parameters: a comma
// further in means the text is not a data URL, and a long payload is never searched for one.
const MAX_HEADER_LENGTH = 1024;
const SCHEME = /^data:/i;
const BASE64_MARKER = /;\x20*base64$/i;
// Printable ASCII only: control characters and anything else make the text something other than a data URL.
const HEADER_TEXT = /^[\x20-\x7e]*$/;

/**
 * The parts of a `data:` URL, or undefined when `value` is not one. Follows the WHATWG fetch
 * standard's reading: the scheme and `;base64` in any case, the header ends at the first comma,
 * spaces around the media type are ignored. Stricter where a header would be kept in a stored
 * line: it must be printable ASCII and at most 1,024 characters, so a megabyte payload is never
 * scanned for a comma.
 */
export function parseDataUrl(value: unknown): DataUrl | undefined {
  if (typeof value !== "string" || !SCHEME.test(value)) return undefined;
  const comma = value.slice(0, MAX_HEADER_LENGTH).indexOf(",");
  if (comma < 0) return undefined;
  const header = value.slice(0, comma + 1);
  if (!HEADER_TEXT.test(header)) return undefined;
  let type = value.slice(5, comma).trim();
  const marker = BASE64_MARKER.exec(type);
  if (marker) type = type.slice(0, marker.index).trim();
  const essence = type.split(";", 1)[0]!.trim();
  return {
    header,
    mediaType: parseContentType(essence)?.essence,
    base64: marker !== null,
    payload: value.slice(comma + 1),
  };
}
