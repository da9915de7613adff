import { abortedError, throwIfAborted } from "./abort.js";
import { StowageError } from "./errors.js";
import { concatBytes } from "./streams.js";

/**
 * What one JSON text may cost before it is parsed. `JSON.parse` holds the event loop for the
 * whole text, and its time grows with the structure, not only the bytes: 15 MiB of nested arrays
 * took 2 s, 15 MiB of empty objects (`[{},{},…]`) 3 s. A budget fitting what a caller really
 * sends refuses such a text while it is read, before anything parses it.
 */
export interface JsonBudget {
  /** Bytes of the text (UTF-8); more is TOO_LARGE (reason `JSON_TOO_LARGE`). */
  maxBytes: number;
  /** Arrays and objects nested in each other; deeper is INVALID_INPUT (reason `JSON_TOO_DEEP`). */
  maxDepth: number;
  /**
   * Array elements and object members, counted as the arrays, objects and commas outside strings
   * (never fewer than there are); more is INVALID_INPUT (reason `JSON_TOO_MANY_VALUES`).
   */
  maxValues: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

function assertBudget(budget: JsonBudget): void {
  for (const field of ["maxBytes", "maxDepth", "maxValues"] as const) {
    const value = budget?.[field];
    if (typeof value !== "number" || !(value >= 0)) {
      throw new StowageError(
        "INVALID_INPUT",
        `JSON budget ${field} must be a number ≥ 0, got ${String(value)}`,
      );
    }
  }
}

/**
 * Checks a JSON text against a {@link JsonBudget} one chunk at a time, as it arrives: a linear
 * scan of its bytes for brackets and commas outside strings. Structural characters are ASCII and
 * never part of a multi-byte UTF-8 sequence, so bytes are scanned as they are, split anywhere.
 * It does not check that the text is JSON: `JSON.parse` does, once the text is known to be cheap.
 */
class JsonBudgetScanner {
  private bytes = 0;
  private depth = 0;
  private values = 0;
  private inString = false;
  private escaped = false;

  constructor(
    private readonly budget: JsonBudget,
    /** What the text is, for messages (`"the request body"`). */
    private readonly what = "the JSON text",
  ) {
    assertBudget(budget);
  }

  /** Scans the next chunk; throws TOO_LARGE or INVALID_INPUT as soon as the budget is exceeded. */
  push(chunk: Uint8Array): void {
    const { maxBytes, maxDepth, maxValues } = this.budget;
    this.bytes += chunk.byteLength;
    if (this.bytes > maxBytes) throw this.tooLarge();
    let { depth, values, inString, escaped } = this;
    for (let index = 0; index < chunk.length; index++) {
      const byte = chunk[index]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE) inString = false;
      } else if (byte === QUOTE) inString = true;
      else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
        depth++;
        values++;
        if (depth > maxDepth) throw this.tooDeep();
        if (values > maxValues) throw this.tooManyValues();
      } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) depth--;
      else if (byte === COMMA && ++values > maxValues) throw this.tooManyValues();
    }
    Object.assign(this, { depth, values, inString, escaped });
  }

  tooLarge(): StowageError {
    const { maxBytes } = this.budget;
    return new StowageError("TOO_LARGE", `${this.what} is larger than the limit of ${maxBytes} bytes`, {
      reason: "JSON_TOO_LARGE",
      details: { limitBytes: maxBytes },
    });
  }

  private tooDeep(): StowageError {
    return new StowageError(
      "INVALID_INPUT",
      `${this.what} nests arrays and objects deeper than ${this.budget.maxDepth} levels`,
      { reason: "JSON_TOO_DEEP", details: { maxDepth: this.budget.maxDepth } },
    );
  }

  private tooManyValues(): StowageError {
    return new StowageError(
      "INVALID_INPUT",
      `${this.what} holds more than ${this.budget.maxValues} array elements and object members`,
      { reason: "JSON_TOO_MANY_VALUES", details: { maxValues: this.budget.maxValues } },
    );
  }
}

/** Options of {@link readJsonWithinBudget}. */
export interface ReadJsonOptions {
  /** What the text is, for messages. Default `"the JSON text"`. */
  what?: string;
  /** The length its sender declared (`content-length`): over `maxBytes`, it is refused unread. */
  declaredBytes?: number;
  signal?: AbortSignal;
}

/**
 * Reads a JSON text from `stream` (`null`: an empty text) within `budget`, checking each chunk as
 * it arrives, and parses it only once the whole text is within the budget: a text over it is
 * refused before it is all read (the stream is cancelled), and what is parsed costs at most what
 * the budget allows; a declared length over the budget is refused without touching the stream.
 * Invalid UTF-8 is replaced (U+FFFD) as `Response.json()` does. Throws
 * TOO_LARGE (`JSON_TOO_LARGE`), INVALID_INPUT (`JSON_TOO_DEEP`, `JSON_TOO_MANY_VALUES`,
 * `INVALID_JSON`) or ABORTED.
 */
export async function readJsonWithinBudget(
  stream: ReadableStream<Uint8Array> | null,
  budget: JsonBudget,
  options: ReadJsonOptions = {},
): Promise<unknown> {
  const { what = "the JSON text", declaredBytes, signal } = options;
  const scanner = new JsonBudgetScanner(budget, what);
  throwIfAborted(signal, `read ${what}`);
  // Left unread and uncancelled: the caller may still drain it (an HTTP server keeping its connection).
  if (declaredBytes !== undefined && declaredBytes > budget.maxBytes) throw scanner.tooLarge();
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (stream) {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (signal?.aborted) throw abortedError(signal, `read ${what}`);
        if (done) break;
        scanner.push(value);
        chunks.push(value);
        total += value.byteLength;
      }
    } catch (err) {
      await reader.cancel(err).catch(() => {});
      throw err;
    } finally {
      reader.releaseLock();
    }
  }
  return parseJsonText(new TextDecoder().decode(concatBytes(chunks, total)), what);
}

function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new StowageError("INVALID_INPUT", `${what} is not valid JSON`, {
      cause: err,
      reason: "INVALID_JSON",
    });
  }
}
