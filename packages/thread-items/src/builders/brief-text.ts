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
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    // Only a bounded slice is cleaned, so a 100 MB single-line output costs no more than a short one.
    const slice = sanitizeText(text.slice(start, Math.min(end, start + BRIEF_LINE_MAX_CHARS * 4)));
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
  // Folding a bounded prefix keeps long reasoning cheap; the spare characters absorb the folding.
  const window = max * 4;
  const folded = sanitizeText(text.slice(0, window)).replace(/\s+/g, " ").trim();
  return text.length > window && folded.length <= max ? `${folded}…` : clip(folded, max);
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
