import { Buffer } from "node:buffer";
import type { InternalByteRange, InternalUrlRouter } from "@stowage/artifacts";
import { StowageError, sanitizeText } from "@stowage/core";
import { LineSplitter } from "./line-splitter.js";

/** Most bytes one search reads across artifacts, agent outputs and thread items. */
export const MAX_SEARCH_SCANNED_BYTES = 32 * 1024 * 1024;
/** Most bytes one search reads of one artifact or agent output, so that one giant log cannot hide the others. */
export const MAX_SEARCH_SOURCE_BYTES = 8 * 1024 * 1024;
/** Bytes read at a time while scanning an artifact or an agent output. */
const SCAN_RANGE_BYTES = 1024 * 1024;
/** Characters of a matching line shown around the match. */
const EXCERPT_CHARS = 200;
/** Skipped sources listed in a result; more are counted. */
const MAX_LISTED_SKIPPED = 20;

export interface SearchMatch {
  uri: string;
  line?: number;
  /** The thread item's id, for a match in a thread. */
  item?: string;
  excerpt: string;
}

/** A source that could not be read, and why (its error's code and reason). */
export interface SkippedSource {
  uri: string;
  code: string;
  reason?: string;
}

/** An artifact still being written: searched as far as it was written when read. */
export interface IncompleteSource {
  uri: string;
  scannedBytes: number;
}

/** A source read only in part: its first `scannedBytes` of `size`, up to line `line`. */
export interface PartialSource {
  uri: string;
  scannedBytes: number;
  size: number;
  /** The line the scan stopped in; read on from it. */
  line: number;
}

/** Whether the text looked at is a piece of a longer line: the line goes on before it, after it. */
interface Cut {
  cutBefore: boolean;
  cutAfter: boolean;
}

const WHOLE: Cut = { cutBefore: false, cutAfter: false };

/** The match and the text around it, `…` where the line goes on. */
function excerptAround(text: string, at: number, length: number, cut: Cut): string {
  const start = Math.max(0, at - Math.floor((EXCERPT_CHARS - length) / 2));
  const before = start > 0 || cut.cutBefore;
  const after = start + EXCERPT_CHARS < text.length || cut.cutAfter;
  return `${before ? "…" : ""}${text.slice(start, start + EXCERPT_CHARS)}${after ? "…" : ""}`;
}

/**
 * One run of `search_session`: the matches found so far, the bytes read, and what was skipped, cut
 * or made it stop. Each `search…` method returns false once the whole search must stop (the
 * match limit or the byte budget reached).
 */
export class SessionSearch {
  readonly matches: SearchMatch[] = [];
  readonly skipped: SkippedSource[] = [];
  readonly partial: PartialSource[] = [];
  readonly incomplete: IncompleteSource[] = [];
  /** Skipped sources past the {@link MAX_LISTED_SKIPPED} listed. */
  skippedNotListed = 0;
  /** Bytes read from files, plus the JSON of the thread items looked at. */
  scannedBytes = 0;
  stopped: "limit" | "budget" | undefined;
  private readonly needle: string;

  constructor(
    text: string,
    private readonly limit: number,
    private readonly signal: AbortSignal,
  ) {
    this.needle = text.toLowerCase();
  }

  get complete(): boolean {
    return (
      this.stopped === undefined &&
      this.skipped.length === 0 &&
      this.partial.length === 0 &&
      this.incomplete.length === 0
    );
  }

  /** Records the match in `text`, if any; "stop" when it is one past the limit. */
  private look(
    uri: string,
    text: string,
    where: { line?: number; item?: string },
    cut: Cut = WHOLE,
  ): "none" | "match" | "stop" {
    const at = text.toLowerCase().indexOf(this.needle);
    if (at === -1) return "none";
    if (this.matches.length >= this.limit) {
      this.stopped = "limit";
      return "stop";
    }
    this.matches.push({ uri, ...where, excerpt: excerptAround(text, at, this.needle.length, cut) });
    return "match";
  }

  /**
   * False only when no line of `lines` (complete lines joined by `\n`) can match. Sanitizing
   * them together gives the lines sanitized one by one, joined by `\n` (no escape sequence spans a
   * line's end; `\r\n` is a line's end both ways), and their lower case is each line's (only a
   * final sigma depends on its neighbours, and a line's end is an end both ways): a line that
   * matches shows the needle in there too.
   */
  private mayMatch(lines: string, sanitize: boolean): boolean {
    return (sanitize ? sanitizeText(lines) : lines).toLowerCase().includes(this.needle);
  }

  /** False, with `stopped` set, when the budget is spent (checked before each source). */
  private budgetLeft(): boolean {
    if (this.scannedBytes < MAX_SEARCH_SCANNED_BYTES) return true;
    this.stopped = "budget";
    return false;
  }

  /**
   * Scans `artifact://<id>` or `agent://<id>` line by line, reading it in ranges of at most
   * {@link SCAN_RANGE_BYTES} (so it is read once, whatever its number of lines), at most
   * {@link MAX_SEARCH_SOURCE_BYTES} of it and never past the budget; each line is matched as the
   * model reads it (`sanitize` for artifacts, as the router sanitizes them). A source that cannot
   * be read is skipped and recorded; only the abort of this call stops the search with an error.
   * An artifact of a tool still running is searched as far as it is written, and recorded.
   */
  async searchFile(router: InternalUrlRouter, uri: string, sanitize: boolean): Promise<boolean> {
    if (!this.budgetLeft()) return false;
    const allowance = Math.min(MAX_SEARCH_SOURCE_BYTES, MAX_SEARCH_SCANNED_BYTES - this.scannedBytes);
    let matchedLine = 0;
    const lines = new LineSplitter(
      this.needle.length - 1,
      (piece) => {
        const { line } = piece;
        if (line === matchedLine) return true; // one match per line, even a line read in pieces
        // A CRLF line's `\r` is part of its end, not of its text.
        const text = !piece.cutAfter && piece.text.endsWith("\r") ? piece.text.slice(0, -1) : piece.text;
        const found = this.look(uri, sanitize ? sanitizeText(text) : text, { line }, piece);
        if (found === "match") matchedLine = line;
        return found !== "stop";
      },
      (text) => this.mayMatch(text, sanitize),
    );
    let start = 0;
    let read = 0;
    for (;;) {
      let range: InternalByteRange;
      try {
        range = await router.readBytes(uri, {
          start,
          allowIncomplete: uri.startsWith("artifact://"),
          maxBytes: Math.min(SCAN_RANGE_BYTES, allowance - read),
          signal: this.signal,
        });
      } catch (err) {
        if (!StowageError.is(err) || (err.code === "ABORTED" && this.signal.aborted)) throw err;
        this.skip(uri, err);
        return true;
      }
      const length = range.bytes.byteLength;
      read += length;
      this.scannedBytes += length;
      start += length;
      if (!lines.push(range.bytes)) return false;
      // A file cut shorter since it was listed ends where its reads end.
      if (start >= range.size || length === 0) {
        if (!range.complete) this.incomplete.push({ uri, scannedBytes: read });
        return lines.end();
      }
      if (read >= allowance) {
        if (!lines.cut()) return false;
        this.partial.push({ uri, scannedBytes: read, size: range.size, line: lines.line });
        return this.budgetLeft();
      }
    }
  }

  /** Looks through one thread item (its JSON, one line, as a thread page shows it). */
  searchThreadItem(uri: string, item: { id?: string | undefined }): boolean {
    if (!this.budgetLeft()) return false;
    const json = JSON.stringify(item);
    this.scannedBytes += Buffer.byteLength(json);
    return this.look(uri, json, item.id === undefined ? {} : { item: item.id }) !== "stop";
  }

  /**
   * What a listing (`artifact://` or `agent://`) holds; nothing when it cannot be read, which is
   * recorded as one skipped `<scheme>://`, and the search goes on with the others. Only the abort
   * of this call stops it with an error.
   */
  async listed<T>(scheme: "artifact" | "agent", listing: Promise<T[]>): Promise<T[]> {
    try {
      return await listing;
    } catch (err) {
      if (!StowageError.is(err) || (err.code === "ABORTED" && this.signal.aborted)) throw err;
      this.skip(`${scheme}://`, err);
      return [];
    }
  }

  private skip(uri: string, err: StowageError): void {
    if (this.skipped.length >= MAX_LISTED_SKIPPED) {
      this.skippedNotListed++;
      return;
    }
    this.skipped.push({ uri, code: err.code, ...(err.reason === undefined ? {} : { reason: err.reason }) });
  }
}
