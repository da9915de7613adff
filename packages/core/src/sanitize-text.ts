const ESC = 0x1b;
const BEL = 0x07;
const LF = 0x0a;
const CR = 0x0d;
// 8-bit forms of the introducers (C1 controls, as U+0080–U+009F code points).
const C1_DCS = 0x90;
const C1_SOS = 0x98;
const C1_CSI = 0x9b;
const C1_ST = 0x9c;
const C1_OSC = 0x9d;
const C1_PM = 0x9e;
const C1_APC = 0x9f;

/** Every character the sanitizer acts on: C0 controls but tab and newline, DEL, C1 controls. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const isFinalByte = (c: number) => c >= 0x40 && c <= 0x7e;
const isParameterOrIntermediate = (c: number) => c >= 0x20 && c <= 0x3f;
const isIntermediate = (c: number) => c >= 0x20 && c <= 0x2f;

/**
 * Where a control sequence whose body starts at `bodyStart` ends, exclusive: after `ESC [` or
 * 8-bit CSI for `csi`, after `ESC ]`/`P`/`X`/`^`/`_` or their 8-bit forms for `string` (OSC, DCS,
 * SOS, PM, APC, ended by BEL or ST), right after ESC for `short` (intermediates, then a final).
 * A string sequence without a terminator ends at the end of its line (before `\n` or `\r`), so
 * broken output never swallows more than one line; a CSI cut off by the end of the text ends there.
 */
function sequenceEnd(text: string, bodyStart: number, introducer: "csi" | "string" | "short"): number {
  let i = bodyStart;
  if (introducer === "csi") {
    while (i < text.length && isParameterOrIntermediate(text.charCodeAt(i))) i++;
    return i < text.length && isFinalByte(text.charCodeAt(i)) ? i + 1 : i;
  }
  if (introducer === "string") {
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === BEL || c === C1_ST) return i + 1;
      if (c === ESC && text.charCodeAt(i + 1) === 0x5c) return i + 2; // ST as ESC \
      if (c === LF || c === CR) return i; // unterminated: the line's end stays
    }
    return i;
  }
  while (i < text.length && isIntermediate(text.charCodeAt(i))) i++;
  return i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x7e ? i + 1 : i;
}

/** Where the sequence starting with ESC at `at` ends, exclusive (just the ESC when nothing valid follows). */
function escapeEnd(text: string, at: number): number {
  if (at + 1 >= text.length) return at + 1;
  const kind = introducerAfterEsc(text.charCodeAt(at + 1));
  return sequenceEnd(text, kind === "short" ? at + 1 : at + 2, kind);
}

function introducerAfterEsc(c: number): "csi" | "string" | "short" {
  if (c === 0x5b) return "csi"; // [
  if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) return "string"; // ] P X ^ _
  return "short";
}

function c1Introducer(c: number): "csi" | "string" | undefined {
  if (c === C1_CSI) return "csi";
  if (c === C1_OSC || c === C1_DCS || c === C1_SOS || c === C1_PM || c === C1_APC) return "string";
  return undefined;
}

/**
 * Characters that hide text from a person while a model still reads it, or that make a person
 * see text in another order than a model reads it (invisible prompt injection, "Trojan Source"):
 * U+200B zero width space; U+2060–U+2064 word joiner and invisible operators; U+FEFF zero width
 * no-break space (a BOM); U+202A–U+202E bidi embeddings and overrides; U+2066–U+2069 bidi
 * isolates; U+206A–U+206F deprecated format controls; U+FFF9–U+FFFB interlinear annotations;
 * U+E0000–U+E007F tag characters (ASCII written invisibly).
 */
function isInvisible(codePoint: number): boolean {
  return (
    codePoint === 0x200b ||
    (codePoint >= 0x202a && codePoint <= 0x202e) ||
    (codePoint >= 0x2060 && codePoint <= 0x2064) ||
    (codePoint >= 0x2066 && codePoint <= 0x206f) ||
    codePoint === 0xfeff ||
    (codePoint >= 0xfff9 && codePoint <= 0xfffb) ||
    (codePoint >= 0xe0000 && codePoint <= 0xe007f)
  );
}

/** Variation selectors: one after a character picks its form (emoji, CJK variants); a run of them carries hidden bytes. */
function isVariationSelector(codePoint: number): boolean {
  return (codePoint >= 0xfe00 && codePoint <= 0xfe0f) || (codePoint >= 0xe0100 && codePoint <= 0xe01ef);
}

/** A cheap first look: text without any of these code units has nothing for {@link applyUnicodeRules}. */
const UNICODE_CANDIDATE =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: variation selectors are listed on their own on purpose
  /[\u200b\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufe00-\ufe0f\ufeff\ufff9-\ufffb\ud800-\udfff]/;
/** Code units outside U+200B–U+206F and U+D800–U+FFFF are never invisible, selectors or surrogates: the scan's fast path. */
const isPlainUnit = (unit: number) => unit < 0x200b || (unit > 0x206f && unit < 0xd800);

/**
 * Drops invisible characters and a variation selector that follows another (invisible characters
 * between them do not count), and turns a lone surrogate into U+FFFD, in one pass over the code
 * units (a regular expression with `u` and a look-behind was ten times slower on emoji-rich text).
 */
function applyUnicodeRules(text: string): string {
  if (!UNICODE_CANDIDATE.test(text)) return text;
  const parts: string[] = [];
  let runStart = 0;
  let afterSelector = false;
  const replace = (from: number, to: number, by: string) => {
    if (from > runStart) parts.push(text.slice(runStart, from));
    if (by !== "") parts.push(by);
    runStart = to;
  };
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (isPlainUnit(unit)) {
      afterSelector = false;
      continue;
    }
    let codePoint = unit;
    let width = 1;
    if (unit >= 0xd800 && unit <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (unit > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) {
        replace(i, i + 1, "\ufffd"); // a lone surrogate
        afterSelector = false;
        continue;
      }
      codePoint = ((unit - 0xd800) << 10) + (next - 0xdc00) + 0x10000;
      width = 2;
    }
    if (isInvisible(codePoint)) replace(i, i + width, "");
    else if (isVariationSelector(codePoint)) {
      if (afterSelector) replace(i, i + width, "");
      afterSelector = true;
    } else afterSelector = false;
    i += width - 1;
  }
  if (runStart === 0) return text;
  if (runStart < text.length) parts.push(text.slice(runStart));
  return parts.join("");
}

/**
 * Text (tool output, a brief, a thread item's strings) as a model or a person may see it.
 * Invalid UTF-8 has already become U+FFFD (decoding does that); then:
 * - ANSI/VT escape sequences are removed whole: CSI (`ESC [ … final`, colors, cursor moves),
 *   OSC (`ESC ] … BEL|ST`, titles, hyperlinks: the link text stays), DCS, SOS, PM, APC, and
 *   short ESC sequences (`ESC ( B`, `ESC 7`), in their 7-bit and 8-bit (C1) forms; a string
 *   sequence (OSC, DCS, SOS, PM, APC) without its terminator ends at the end of its line
 *   (before `\n` or `\r`);
 * - `\r\n` becomes `\n`, and a lone `\r` (a progress bar redrawing its line) becomes `\n`;
 * - every other control character (C0 but `\n` and `\t`, DEL, C1) is dropped: NUL, BEL,
 *   backspace, form feed, a stray ESC;
 * - invisible characters that hide or reorder text are dropped (see {@link isInvisible}: zero
 *   width space, word joiner, BOM, bidi embeddings/overrides/isolates, tag characters), and so
 *   is a variation selector that follows another; zero width joiner and non-joiner, the
 *   left-to-right/right-to-left marks and single variation selectors stay (scripts and emoji
 *   need them);
 * - a lone surrogate (a string no UTF-8 can hold) becomes U+FFFD.
 * Printable text, tabs, newlines and all other Unicode are kept as they are. The result is
 * sanitized again unchanged.
 */
export function sanitizeText(text: string): string {
  // Most text has nothing to act on: one scan says so, instead of one per rule.
  if (!ANYTHING_TO_ACT_ON.test(text)) return text;
  return applyUnicodeRules(removeControls(text));
}

/** {@link CONTROL} and {@link UNICODE_CANDIDATE} in one character class. */
const ANYTHING_TO_ACT_ON =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: variation selectors are listed on their own on purpose
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufe00-\ufe0f\ufeff\ufff9-\ufffb\ud800-\udfff]/;

/** The control-character part of {@link sanitizeText}. */
function removeControls(text: string): string {
  CONTROL.lastIndex = 0;
  let match = CONTROL.exec(text);
  if (!match) return text;
  const parts: string[] = [];
  let runStart = 0;
  while (match) {
    let i = match.index;
    if (i > runStart) parts.push(text.slice(runStart, i));
    const c = text.charCodeAt(i);
    if (c === ESC) {
      i = Math.max(escapeEnd(text, i), i + 1);
    } else if (c === CR) {
      parts.push("\n");
      i += text.charCodeAt(i + 1) === LF ? 2 : 1;
    } else {
      const kind = c1Introducer(c);
      i = kind ? sequenceEnd(text, i + 1, kind) : i + 1;
    }
    runStart = i;
    CONTROL.lastIndex = i;
    match = CONTROL.exec(text);
  }
  if (runStart < text.length) parts.push(text.slice(runStart));
  return parts.join("");
}
