import { Buffer } from "node:buffer";

/**
 * Where a stream of UTF-8 bytes stands in the grammar of escape sequences that core's `sanitizeText`
 * removes, for readers that see the stream in pieces and must know whether a piece starts inside
 * a sequence (a tail window cut through a long OSC would otherwise show its payload). An opaque
 * number; {@link OUTSIDE_CONTROL_SEQUENCE} is "not in a sequence".
 */
export type ControlSequenceState = number;

/** The state of a stream's first byte, and of every byte outside an escape sequence. */
export const OUTSIDE_CONTROL_SEQUENCE: ControlSequenceState = 0;
const ESCAPE = 1; // after ESC
const ESCAPE_INTERMEDIATE = 2; // ESC, then intermediates (0x20–0x2f), waiting for the final
const CSI = 3; // ESC [ or 8-bit CSI, in its parameters
const STRING = 4; // OSC, DCS, SOS, PM or APC, in its payload
const STRING_ESCAPE = 5; // an ESC in a string's payload: a backslash after it is ST
const STRING_C1_LEAD = 6; // 0xC2 in a string's payload: 0x9C after it is 8-bit ST
const C1_LEAD = 7; // 0xC2 outside a sequence: the lead byte of an 8-bit introducer, or of Latin-1 text

const ESC = 0x1b;
const BEL = 0x07;
const LF = 0x0a;
const CR = 0x0d;
const C1_LEAD_BYTE = 0xc2; // every C1 control (U+0080–U+009F) is 0xC2 then 0x80–0x9F in UTF-8

const isStringIntroducer = (c: number) => c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f; // ] P X ^ _
// Second bytes of 8-bit DCS, SOS, OSC, PM, APC.
const isC1StringIntroducer = (c: number) =>
  c === 0x90 || c === 0x98 || c === 0x9d || c === 0x9e || c === 0x9f;

/** Bytes after a sequence walked one by one before searching: colored output has an ESC every few bytes. */
const NEAR_BYTES = 32;

/**
 * Reads `bytes[start, end)` from `state` and returns the state after it (or, with `stopOutside`,
 * as soon as the stream is outside a sequence). Mirrors `sanitizeText`: a string sequence ends at
 * BEL, ST (`ESC \\` or 8-bit) or before a line's end (`\n`, `\r`); a CSI at its final byte or before any byte that
 * cannot belong to it; a stray ESC ends before the byte after it. Outside a sequence it walks a
 * few bytes, then searches for the next ESC or 0xC2 with Buffer's memchr.
 */
function run(
  bytes: Uint8Array,
  from: ControlSequenceState,
  start: number,
  end: number,
  stopOutside: boolean,
): { state: ControlSequenceState; at: number } {
  const view = asBuffer(bytes);
  let state = from;
  let i = start;
  // The first ESC (0xC2) at or after where it was last searched from; `end` when there is none.
  let nextEscape = -1;
  let nextLead = -1;
  while (i < end) {
    if (state === OUTSIDE_CONTROL_SEQUENCE) {
      if (stopOutside) break;
      let next = i;
      const near = Math.min(end, i + NEAR_BYTES);
      while (next < near && bytes[next] !== ESC && bytes[next] !== C1_LEAD_BYTE) next++;
      if (next === near && near < end) {
        if (nextEscape < next) nextEscape = indexOrEnd(view, ESC, next, end);
        if (nextLead < next) nextLead = indexOrEnd(view, C1_LEAD_BYTE, next, end);
        next = Math.min(nextEscape, nextLead);
      }
      if (next === end) return { state, at: end };
      state = bytes[next] === ESC ? ESCAPE : C1_LEAD;
      i = next + 1;
      continue;
    }
    const c = bytes[i]!;
    switch (state) {
      case ESCAPE:
        if (c === 0x5b) state = CSI;
        else if (isStringIntroducer(c)) state = STRING;
        else if (c >= 0x20 && c <= 0x2f) state = ESCAPE_INTERMEDIATE;
        else if (c >= 0x30 && c <= 0x7e) state = OUTSIDE_CONTROL_SEQUENCE;
        else {
          state = OUTSIDE_CONTROL_SEQUENCE; // a stray ESC: the byte after it is read outside
          continue;
        }
        break;
      case ESCAPE_INTERMEDIATE:
        if (c >= 0x20 && c <= 0x2f) break;
        state = OUTSIDE_CONTROL_SEQUENCE;
        if (c >= 0x30 && c <= 0x7e) break;
        continue;
      case CSI:
        if (c >= 0x20 && c <= 0x3f) break;
        state = OUTSIDE_CONTROL_SEQUENCE;
        if (c >= 0x40 && c <= 0x7e) break;
        continue;
      case STRING:
        if (c === BEL) state = OUTSIDE_CONTROL_SEQUENCE;
        else if (c === ESC) state = STRING_ESCAPE;
        else if (c === C1_LEAD_BYTE) state = STRING_C1_LEAD;
        else if (c === LF || c === CR) {
          state = OUTSIDE_CONTROL_SEQUENCE; // unterminated: the line's end stays
          continue;
        }
        break;
      case STRING_ESCAPE:
        if (c === 0x5c) {
          state = OUTSIDE_CONTROL_SEQUENCE; // ST as ESC \
          break;
        }
        state = STRING;
        continue;
      case STRING_C1_LEAD:
        if (c === 0x9c) {
          state = OUTSIDE_CONTROL_SEQUENCE;
          break;
        }
        state = STRING;
        continue;
      case C1_LEAD:
        if (c === 0x9b) state = CSI;
        else if (isC1StringIntroducer(c)) state = STRING;
        else {
          state = OUTSIDE_CONTROL_SEQUENCE; // Latin-1 text or another C1 control
          continue;
        }
        break;
    }
    i++;
  }
  return { state, at: i };
}

/** Buffer's indexOf is a memchr; a Uint8Array's is several times slower. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function indexOrEnd(bytes: Buffer, byte: number, from: number, end: number): number {
  const found = bytes.indexOf(byte, from);
  return found === -1 || found > end ? end : found;
}

/**
 * The state after reading `bytes[start, end)` from `state` (defaults: the whole array). No
 * sequence runs across a line's end (`\n` or `\r`: an unterminated string sequence ends there),
 * so only the bytes after the range's last one are read, from outside any sequence: a range of
 * whole lines, or of progress-bar redraws, costs two reverse memchrs.
 */
export function scanControlSequences(
  bytes: Uint8Array,
  state: ControlSequenceState,
  start = 0,
  end = bytes.byteLength,
): ControlSequenceState {
  if (end <= start) return state;
  const view = asBuffer(bytes);
  const lastLineEnd = Math.max(view.lastIndexOf(LF, end - 1), view.lastIndexOf(CR, end - 1));
  return lastLineEnd >= start
    ? run(bytes, OUTSIDE_CONTROL_SEQUENCE, lastLineEnd + 1, end, false).state
    : run(bytes, state, start, end, false).state;
}

/**
 * Where the escape sequence open at `bytes[start]` (the stream being in `state` there) ends: the
 * first offset at or after `start` that is outside any sequence, or `bytes.byteLength` when the
 * sequence runs to the end. `start` itself when `state` is outside a sequence.
 */
export function endOfOpenControlSequence(bytes: Uint8Array, state: ControlSequenceState, start = 0): number {
  return run(bytes, state, start, bytes.byteLength, true).at;
}
