/**
 * Where a long text is cut into windows for redaction, so that each shape reads one window at a
 * time (a pass over 16 MiB took up to 180 ms) and no secret is cut in two. A secret of every shape
 * is made of a token's characters, except a PEM block (lines) and an assignment or a header, whose
 * name and value may be apart by spaces and a line break. So a window ends at a line break where
 * none of that can be going on: not inside a PEM block, not after a line ending in `:`, `=`, a quote
 * or a space or an Authorization scheme, not before a line starting with a space; else at such a
 * space; else (minified JSON, one long word) at a character no shape's secret or context holds.
 */

/** The length a window aims at (characters). */
const WINDOW_CHARS = 256 * 1024;
/** How far past the target a cut is looked for; then the window is cut there whatever it holds. */
const CUT_SEARCH_CHARS = 64 * 1024;
/** The longest PEM block kept whole across a cut (an RSA key of 16,384 bits is about 13 KB). */
const MAX_PEM_BLOCK_CHARS = 64 * 1024;

const PEM_HEADER = "-----BEGIN ";
const PEM_FOOTER = "-----END ";

/** `:`, `=`, quotes and whitespace: what may stand between a secret's name and its value. */
const isAssignmentEdge = (code: number) =>
  code === 0x3a ||
  code === 0x3d ||
  code === 0x22 ||
  code === 0x27 ||
  code === 0x20 ||
  code === 0x09 ||
  code === 0x0d;

/** A character of no secret and of no context: a cut there cuts nothing the shapes read. */
const isNeutral = (code: number) =>
  !(
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    "_-+/=.~:@\"' \t\r\n".includes(String.fromCharCode(code))
  );

/**
 * Whether a PEM block is open at a position, asked of positions in increasing order: reads the
 * markers from `from` on once (a block opened more than a block's length before `from` is not
 * seen, and is not kept whole).
 */
function pemBlockTracker(text: string, from: number) {
  let open = false;
  // The next header and footer at or after the last marker read, each searched for once.
  let header = text.indexOf(PEM_HEADER, from);
  let footer = text.indexOf(PEM_FOOTER, from);
  const nextOf = (position: number) => (position === -1 ? Infinity : position);
  return (at: number): boolean => {
    for (;;) {
      const next = Math.min(nextOf(header), nextOf(footer));
      if (next >= at) return open;
      open = next === header;
      if (next === header) header = text.indexOf(PEM_HEADER, next + 1);
      else footer = text.indexOf(PEM_FOOTER, next + 1);
    }
  };
}

/** Whether the word before `at` is an Authorization scheme, whose credentials come after the break. */
const endsWithScheme = (text: string, at: number) =>
  /(?:bearer|basic)$/i.test(text.slice(Math.max(0, at - 6), at));

/**
 * A break (a line break or a space) at `at` that a window may end after: no name before it waits
 * for its value (after `:`, `=`, a quote, a space, or an Authorization scheme), and no value after
 * it is indented to its name.
 */
function isSafeBreak(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at + 1);
  return !isAssignmentEdge(before) && after !== 0x20 && after !== 0x09 && !endsWithScheme(text, at);
}

/** The first position at or after `from`, before `limit`, of a safe `separator` outside a PEM block; -1 if none. */
function safeBreak(region: string, separator: string, from: number): number {
  const insidePemBlock = pemBlockTracker(region, 0);
  for (let at = region.indexOf(separator, from); at !== -1; at = region.indexOf(separator, at + 1)) {
    if (isSafeBreak(region, at) && !insidePemBlock(at)) return at;
  }
  return -1;
}

/** The end (exclusive) of the window that starts at `start`. */
export function windowEnd(text: string, start: number): number {
  const target = start + WINDOW_CHARS;
  if (target + CUT_SEARCH_CHARS >= text.length) return text.length;
  const limit = target + CUT_SEARCH_CHARS;
  // Markers are read from a block's length before the target up to the limit, in a copy of that
  // region only, so that a search for a marker the text does not hold reads no further.
  const regionStart = Math.max(start, target - MAX_PEM_BLOCK_CHARS);
  const region = text.slice(regionStart, limit);
  for (const separator of ["\n", " "]) {
    const at = safeBreak(region, separator, target - regionStart);
    if (at !== -1) return regionStart + at + 1;
  }
  for (let at = target; at < limit; at++) {
    if (isNeutral(text.charCodeAt(at))) return at + 1;
  }
  return limit;
}
