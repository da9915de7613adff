import { StowageError } from "@stowage/core";

/**
 * The longest line (in characters) a session transcript may have. A line is held whole to be
 * parsed, so without a bound one stream with no newline holds everything it decompresses to.
 * Real lines stay far below: an Anthropic API request, which carries every message of a
 * conversation, is at most 32 MB, and the longest line of the real transcripts tested is 157 KB.
 */
export const MAX_JSONL_LINE_CHARS = 32 * 1024 * 1024;

/**
 * Checks, chunk by chunk, that bytes are a session's JSON Lines: UTF-8, every non-empty line one
 * JSON object, and no line whose `sessionId` names another session (Claude Code writes it on
 * every line). Used for a session blob in the compatibility format (one gzipped JSONL
 * transcript), so that one that could not be resumed is refused when it is stored. Holds one
 * line at a time.
 */
export class JsonlChecker {
  readonly #sessionId: string;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  /** The pieces of the line not yet ended (a long line arrives in many chunks). */
  #partial: string[] = [];
  #partialChars = 0;
  #line = 0;
  #records = 0;

  constructor(sessionId: string) {
    this.#sessionId = sessionId;
  }

  /** Lines holding a JSON value seen so far. */
  get records(): number {
    return this.#records;
  }

  update(chunk: Uint8Array): void {
    this.#take(this.#decode(chunk, true), false);
  }

  /** The end of the bytes: checks the last line; INVALID_INPUT when there was no record. */
  finish(): void {
    this.#take(this.#decode(new Uint8Array(0), false), true);
    if (this.#records === 0) {
      throw new StowageError("INVALID_INPUT", "session transcript holds no JSON line", {
        reason: "BAD_JSONL",
      });
    }
  }

  #decode(chunk: Uint8Array, stream: boolean): string {
    try {
      return this.#decoder.decode(chunk, { stream });
    } catch (err) {
      throw new StowageError("INVALID_INPUT", "session transcript is not valid UTF-8", {
        cause: err,
        reason: "BAD_JSONL",
      });
    }
  }

  #take(text: string, last: boolean): void {
    const lines = text.split("\n");
    if (!last && lines.length === 1) {
      this.#keepPartial(text);
      return;
    }
    lines[0] = this.#partial.join("") + lines[0];
    this.#partial = [];
    this.#partialChars = 0;
    if (!last) this.#keepPartial(lines.pop() ?? "");
    for (const line of lines) {
      this.#line++;
      if (line.length > MAX_JSONL_LINE_CHARS) throw this.#lineTooLong(this.#line);
      if (line.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (err) {
        throw new StowageError("INVALID_INPUT", `session transcript line ${this.#line} is not JSON`, {
          cause: err,
          reason: "BAD_JSONL",
          details: { line: this.#line },
        });
      }
      // Claude Code writes one object per line; `1`, `"x"`, `null` or an array is no entry.
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw new StowageError(
          "INVALID_INPUT",
          `session transcript line ${this.#line} is not a JSON object`,
          {
            reason: "BAD_JSONL",
            details: { line: this.#line },
          },
        );
      }
      const named = (value as { sessionId?: unknown }).sessionId;
      if (typeof named === "string" && named !== this.#sessionId) {
        throw new StowageError(
          "INVALID_INPUT",
          `session transcript line ${this.#line} belongs to session ${named}, not ${this.#sessionId}`,
          { reason: "SESSION_MISMATCH", details: { line: this.#line } },
        );
      }
      this.#records++;
    }
  }

  /** Keeps the start of a line not yet ended, refusing it as soon as it passes the bound. */
  #keepPartial(piece: string): void {
    this.#partialChars += piece.length;
    if (this.#partialChars > MAX_JSONL_LINE_CHARS) throw this.#lineTooLong(this.#line + 1);
    this.#partial.push(piece);
  }

  #lineTooLong(line: number): StowageError {
    return new StowageError(
      "TOO_LARGE",
      `session transcript line ${line} is longer than ${MAX_JSONL_LINE_CHARS} characters`,
      { reason: "JSONL_LINE_TOO_LARGE", details: { line, limit: MAX_JSONL_LINE_CHARS } },
    );
  }
}
