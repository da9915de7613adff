import { decodeBase64, isBase64Image } from "./base64.js";
import type { TextSpan } from "./truncate-string.js";

/** A base64 digit of either alphabet (standard `+/`, URL-safe `-_`). */
function isBase64Digit(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) || // A-Z
    (code >= 0x61 && code <= 0x7a) || // a-z
    (code >= 0x30 && code <= 0x39) || // 0-9
    code === 0x2b || // +
    code === 0x2f || // /
    code === 0x2d || // -
    code === 0x5f // _
  );
}

const EQUALS = 0x3d;

/**
 * Base64 images written inside a longer text (a tool output that serializes its MCP content as
 * JSON, a data URL in a log line): unbroken runs of at least `minChars` base64 digits, with their
 * padding, that decode and whose bytes start like an image. One linear pass; only runs that
 * start like an image are decoded. Line-wrapped base64 inside text is not recognized.
 */
export function embeddedBase64Images(text: string, minChars: number): TextSpan[] {
  const spans: TextSpan[] = [];
  let index = 0;
  while (index < text.length) {
    if (!isBase64Digit(text.charCodeAt(index))) {
      index++;
      continue;
    }
    const start = index;
    while (index < text.length && isBase64Digit(text.charCodeAt(index))) index++;
    for (let pads = 0; pads < 2 && text.charCodeAt(index) === EQUALS; pads++) index++;
    if (index - start < minChars) continue;
    const run = text.slice(start, index);
    if (isBase64Image(run) && decodeBase64(run) !== null) spans.push({ start, end: index });
  }
  return spans;
}
