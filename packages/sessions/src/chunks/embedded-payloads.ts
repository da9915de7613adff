import { sniffImageType } from "@stowage/core";

/**
 * Image and document payloads written as base64 inside a captured file, wherever the agent put
 * them (Claude Code's `source.data` and the Read tool's `toolUseResult.file.base64`, Codex's
 * `data:` URLs, a tool output's JSON): found in the file's bytes, never by parsing it, so that
 * the file can be rebuilt byte for byte. Only a payload whose text is canonical base64 (the
 * standard alphabet, padded, on one line) moves: encoding its bytes again gives exactly the text
 * it was, so a restore writes the same file. Any other spelling stays where it is.
 */
export interface EmbeddedPayload {
  /** Byte offsets of the base64 text in the file. */
  start: number;
  end: number;
  /** What the text decodes to: the image or document. */
  bytes: Uint8Array;
}

/** Payloads of at least this many base64 characters move (the SessionStore's threshold too). */
export const PAYLOAD_THRESHOLD_CHARS = 1024;

/**
 * How each format the payloads are recognized by starts in base64 (its signature at offset 0,
 * encoded): PNG, JPEG, GIF, WebP (`RIFF`, checked for `WEBP` once decoded) and PDF.
 */
const STARTS = ["iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "JVBERi0"].map((text) =>
  Buffer.from(text, "latin1"),
);
const PDF_SIGNATURE = Buffer.from("%PDF-", "latin1");

/** 1 for a digit of standard base64 (`A-Z a-z 0-9 + /`), 2 for a URL-safe one (`- _`), 3 for `=`. */
const DIGIT_CLASS = new Uint8Array(256);
for (const c of Buffer.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", "latin1")) {
  DIGIT_CLASS[c] = 1;
}
DIGIT_CLASS[0x2d] = 2;
DIGIT_CLASS[0x5f] = 2;
DIGIT_CLASS[0x3d] = 3;

// Digits whose low bits are zero, so that they can end canonical base64 before its padding.
const LAST_BEFORE_TWO_PADS = new Set(Buffer.from("AQgw", "latin1"));
const LAST_BEFORE_ONE_PAD = new Set(Buffer.from("AEIMQUYcgkosw048", "latin1"));

/** The end of the base64 run that starts at `start`, with its padding, or -1 when it is not one canonical run. */
function canonicalRunEnd(text: Buffer, start: number): number {
  let end = start;
  while (end < text.byteLength && DIGIT_CLASS[text[end]!] === 1) end++;
  const digitsEnd = end;
  while (end < text.byteLength && end - digitsEnd < 2 && text[end] === 0x3d) end++;
  const padding = end - digitsEnd;
  // A URL-safe digit, a third `=` or a digit after the padding: not a run that rebuilds exactly.
  if (end < text.byteLength && DIGIT_CLASS[text[end]!] !== 0) return -1;
  if ((end - start) % 4 !== 0) return -1;
  if (padding === 2 && !LAST_BEFORE_TWO_PADS.has(text[digitsEnd - 1]!)) return -1;
  if (padding === 1 && !LAST_BEFORE_ONE_PAD.has(text[digitsEnd - 1]!)) return -1;
  return end;
}

function isPayload(bytes: Uint8Array): boolean {
  if (sniffImageType(bytes) !== undefined) return true;
  return PDF_SIGNATURE.every((byte, i) => bytes[i] === byte);
}

/**
 * The payloads in `bytes`, in order, none overlapping: runs of at least `minChars` canonical
 * base64 characters that start where a run can (not in the middle of one) with a known
 * signature. One native search per signature; only a run that starts like a payload is read.
 */
export function findEmbeddedPayloads(
  bytes: Uint8Array,
  minChars = PAYLOAD_THRESHOLD_CHARS,
): EmbeddedPayload[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found: EmbeddedPayload[] = [];
  for (const start of STARTS) {
    for (let at = text.indexOf(start); at !== -1; at = text.indexOf(start, at + 1)) {
      if (at > 0 && DIGIT_CLASS[text[at - 1]!] !== 0) continue;
      const end = canonicalRunEnd(text, at);
      if (end === -1 || end - at < minChars) continue;
      const decoded = Buffer.from(text.toString("latin1", at, end), "base64");
      if (
        decoded.byteLength !==
        ((end - at) / 4) * 3 - (text[end - 1] === 0x3d ? (text[end - 2] === 0x3d ? 2 : 1) : 0)
      ) {
        continue;
      }
      const payload = new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
      if (!isPayload(payload)) continue;
      found.push({ start: at, end, bytes: payload });
      at = end - 1;
    }
  }
  return found.sort((a, b) => a.start - b.start);
}
