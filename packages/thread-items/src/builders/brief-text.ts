import { sanitizeText } from "@stowage/core";

/** Longest one-line excerpt in a brief (a command, a first output line), in UTF-16 units. */
export const BRIEF_LINE_MAX_CHARS = 120;
/** Characters of reasoning shown after `[thinking] ` in a thinking item's brief. */
export const THINKING_BRIEF_CHARS = 120;

/** Cuts `text` to at most `max` UTF-16 units plus "…", never splitting a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * The first line of `text` holding something other than whitespace, sanitized (`sanitizeText`:
 * escape sequences and control characters go, a lone `\r` ends the line) and trimmed; "" when
 * none. Sanitized here, as a piece, so that a sequence cut off at its end cannot run into the
 * text a brief puts after it.
 */
export function firstLine(text: string): string {
  return firstLineOf(text, sanitizeText);
}

/**
 * {@link firstLine} of text that is already sanitized whole (a builder's cleaned output): the
 * same line, without scanning it a second time.
 */
export function firstLineOfClean(cleanText: string): string {
  return firstLineOf(cleanText, sliceOfClean);
}

/**
 * A slice from the start of a line of sanitized text, as `sanitizeText` would give it: it is clean
 * already, but for a surrogate pair cut at its end, whose half becomes U+FFFD.
 */
function sliceOfClean(slice: string): string {
  const last = slice.charCodeAt(slice.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? `${slice.slice(0, -1)}\ufffd` : slice;
}

function firstLineOf(text: string, clean: (slice: string) => string): string {
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    // Only a bounded slice is cleaned, so a 100 MB single-line output costs no more than a short one.
    const slice = clean(text.slice(start, Math.min(end, start + BRIEF_LINE_MAX_CHARS * 4)));
    const cut = slice.indexOf("\n");
    const line = (cut === -1 ? slice : slice.slice(0, cut)).trim();
    if (line !== "") return clip(line, BRIEF_LINE_MAX_CHARS);
    if (newline === -1) break;
    start = newline + 1;
  }
  return "";
}

/** Number of lines: "" has 0, "a" and "a\n" have 1, "a\nb" has 2. */
export function countLines(text: string): number {
  if (text === "") return 0;
  let lines = 0;
  let index = text.indexOf("\n");
  while (index !== -1) {
    lines++;
    index = text.indexOf("\n", index + 1);
  }
  return text.endsWith("\n") ? lines : lines + 1;
}

/** Whitespace runs (newlines included) folded to single spaces, sanitized like {@link firstLine}, for one-line briefs. */
export function oneLine(text: string, max: number): string {
  return oneLineOf(text, max, sanitizeText);
}

/** {@link oneLine} of text that is already sanitized whole, without scanning it a second time. */
export function oneLineOfClean(cleanText: string, max: number): string {
  return oneLineOf(cleanText, max, sliceOfClean);
}

function oneLineOf(text: string, max: number, clean: (slice: string) => string): string {
  // Folding a bounded prefix keeps long reasoning cheap; the spare characters absorb the folding.
  const window = max * 4;
  // Only the first max + 1 folded characters matter: they say whether the text is cut, and where.
  const folded = foldWhitespace(clean(text.slice(0, window)), max + 1);
  return text.length > window && folded.length <= max ? `${folded}…` : clip(folded, max);
}

/** What `\s` matches: ECMAScript white space and line terminators. */
const isWhitespace = (c: number): boolean =>
  c === 0x20 ||
  (c >= 0x09 && c <= 0x0d) ||
  (c > 0x7f &&
    (c === 0xa0 ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000 ||
      c === 0xfeff));

/**
 * The first `limit` characters of `text.replace(/\s+/g, " ").trim()`, without folding the rest:
 * whitespace runs become one space, none at either end. Words with single spaces between them are
 * kept as one slice, so that the usual sentence is not copied piece by piece.
 */
function foldWhitespace(text: string, limit: number): string {
  const pieces: string[] = [];
  let length = 0;
  let start = -1; // where the piece being read started; -1 between pieces
  for (let i = 0; i < text.length && length < limit; i++) {
    const c = text.charCodeAt(i);
    if (!isWhitespace(c)) {
      if (start === -1) {
        if (pieces.length > 0) {
          pieces.push(" ");
          length++;
        }
        start = i;
      }
      if (length + (i + 1 - start) >= limit) {
        pieces.push(text.slice(start, i + 1));
        length += i + 1 - start;
        start = -1;
      }
      continue;
    }
    // A single space between two words stays inside the piece.
    if (start !== -1 && c === 0x20 && i + 1 < text.length && !isWhitespace(text.charCodeAt(i + 1))) continue;
    if (start !== -1) {
      pieces.push(text.slice(start, i));
      length += i - start;
      start = -1;
    }
  }
  if (start !== -1) pieces.push(text.slice(start));
  const folded = pieces.length === 1 ? pieces[0]! : pieces.join("");
  return folded.length > limit ? folded.slice(0, limit) : folded;
}

/** Code points in `text` (a surrogate pair counts once), as Python's `len` reports them. */
export function codePointLength(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return text.length - pairs;
}
