/** Most characters of one line held while splitting; a longer line is handed out in pieces of this size. */
const MAX_HELD_LINE_CHARS = 1024 * 1024;

/** A line (without its `\n`), or a piece of one too long to hold. */
export interface LinePiece {
  text: string;
  /** The line's number, from 1. */
  line: number;
  /** The line began before this piece. */
  cutBefore: boolean;
  /** The line goes on after this piece. */
  cutAfter: boolean;
}

/** Receives each line or piece in order; false stops the split. */
export type LineSink = (piece: LinePiece) => boolean;

const NEWLINE = 0x0a;

/** `\n` in UTF-8 is the byte 0x0A and no other character holds that byte. */
function newlinesIn(bytes: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === NEWLINE) count++;
  return count;
}

/**
 * Turns the byte ranges of a file, given in order, into its lines: decoded by one streaming
 * decoder (a UTF-8 character cut between two ranges decodes whole), split at `\n` and numbered
 * from 1 as `read_artifact` numbers them, the unfinished last line carried into the next range.
 * Memory stays bounded whatever the file: a line longer than {@link MAX_HELD_LINE_CHARS} is handed
 * out in pieces, each starting with the last `overlap` characters of the one before, so that text
 * of up to `overlap + 1` characters across a cut is still found whole in one piece.
 *
 * `worthSplitting`, given the complete lines of a range as one text, may say that none of them
 * can interest the sink: they are then counted, not handed out one by one (a look at a whole
 * range is far cheaper than a call per line when a file holds millions of short lines).
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder("utf-8");
  private carried = "";
  private lineNumber = 1;
  /** Pieces of the line being read were handed out already. */
  private continuing = false;

  constructor(
    private readonly overlap: number,
    private readonly sink: LineSink,
    private readonly worthSplitting: (lines: string) => boolean = () => true,
  ) {}

  /** The number of the line being read (the one carried into the next range). */
  get line(): number {
    return this.lineNumber;
  }

  /** The next range of the file; false once the sink stopped. */
  push(bytes: Uint8Array): boolean {
    const text = this.carried + this.decoder.decode(bytes, { stream: true });
    let from = 0;
    const lastNewline = text.lastIndexOf("\n");
    if (lastNewline !== -1 && !this.worthSplitting(text.slice(0, lastNewline))) {
      // What is carried holds no newline, so the range's bytes hold all of them.
      this.lineNumber += newlinesIn(bytes);
      this.continuing = false;
      from = lastNewline + 1;
    }
    for (let newline = text.indexOf("\n", from); newline !== -1; newline = text.indexOf("\n", from)) {
      if (!this.hand(text.slice(from, newline), false)) return false;
      this.lineNumber++;
      this.continuing = false;
      from = newline + 1;
    }
    this.carried = text.slice(from);
    while (this.carried.length > MAX_HELD_LINE_CHARS) {
      if (!this.hand(this.carried.slice(0, MAX_HELD_LINE_CHARS), true)) return false;
      this.continuing = true;
      this.carried = this.carried.slice(MAX_HELD_LINE_CHARS - this.overlap);
    }
    return true;
  }

  /** The end of the file: its last line, when it does not end with `\n`. */
  end(): boolean {
    const last = this.carried + this.decoder.decode();
    this.carried = "";
    return last === "" || this.hand(last, false);
  }

  /** The file was read only up to here: what is carried of the line being read, as a piece. */
  cut(): boolean {
    const piece = this.carried;
    this.carried = "";
    return piece === "" || this.hand(piece, true);
  }

  private hand(text: string, cutAfter: boolean): boolean {
    return this.sink({ text, line: this.lineNumber, cutBefore: this.continuing, cutAfter });
  }
}
