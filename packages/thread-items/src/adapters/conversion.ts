import { describeValue, StowageError } from "@stowage/core";
import type { ThreadItem } from "../schema/thread-item-schema.js";

/** A line (or message) an adapter could not use; it was skipped and conversion went on. */
export interface LineProblem {
  /** 1-based line number (message number for a message stream). */
  line: number;
  message: string;
}

/** What a whole-file conversion (`convertTranscript`) returns. */
export interface ConversionResult {
  items: ThreadItem[];
  problems: LineProblem[];
  /** The agent's session id, when the input names it. */
  sessionId: string | undefined;
}

/** An incremental converter, for a transcript that is still being written (tailing a file). */
export interface LineConverter {
  /** Converts the next line; returns the items it completes (possibly none). Never throws on bad lines. */
  push(line: string): ThreadItem[];
  /** Marks the end of input: closes an open turn. */
  end(): ThreadItem[];
  readonly problems: readonly LineProblem[];
  readonly sessionId: string | undefined;
}

/** Thrown by a record handler for a record of a known type whose shape is wrong; the line is reported. */
export class RecordProblem extends Error {}

// Error text from JSON.parse can quote the input: keep it short, with control characters escaped.
function safeText(text: string): string {
  const short = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return short.replace(
    /[\u0000-\u001f\u007f]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * Keeps at most one tool_result per invocation id: a transcript can repeat a result (a resumed
 * session, a retried write), and a renderer pairs each call with one result. Returns the items to
 * keep and reports each one dropped.
 */
export function uniqueToolResults(): (
  items: ThreadItem[],
  report: (message: string) => void,
) => ThreadItem[] {
  const seen = new Set<string>();
  return (items, report) => {
    // Copied only when something is dropped: almost every line keeps all its items.
    let kept: ThreadItem[] | undefined;
    for (let index = 0; index < items.length; index++) {
      const item = items[index]!;
      if (item.metadata?.type === "tool_result") {
        const id = (item.metadata as { tool: { invocation_id: string } }).tool.invocation_id;
        if (seen.has(id)) {
          kept ??= items.slice(0, index);
          report(`a second tool_result for ${safeText(id)} was skipped`);
          continue;
        }
        seen.add(id);
      }
      kept?.push(item);
    }
    return kept ?? items;
  };
}

/**
 * Wraps a record handler into a {@link LineConverter}: counts lines, skips blank ones, parses JSON,
 * turns unparseable lines, non-object records and {@link RecordProblem}s into reported problems,
 * and drops repeated tool_results.
 */
export function lineConverter(handler: {
  record(record: Record<string, unknown>, line: number): ThreadItem[];
  /**
   * Handles a line from its text alone, without parsing all of it, and returns its items; or
   * undefined to have it parsed and given to `record`. For lines a format writes often and an
   * adapter reads little of.
   */
  skim?(line: string): ThreadItem[] | undefined;
  end(): ThreadItem[];
  sessionId(): string | undefined;
}): LineConverter {
  const problems: LineProblem[] = [];
  const unique = uniqueToolResults();
  let number = 0;
  const report = (message: string) => problems.push({ line: number, message });
  return {
    push(text) {
      number++;
      const line = text.endsWith("\r") ? text.slice(0, -1) : text;
      // A record starts with "{": only a line that does not is looked at for being blank.
      if (line.charCodeAt(0) !== 0x7b && line.trim() === "") return [];
      const skimmed = handler.skim?.(line);
      if (skimmed !== undefined) return skimmed;
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch (err) {
        report(`not valid JSON (${safeText((err as Error).message)})`);
        return [];
      }
      if (typeof record !== "object" || record === null || Array.isArray(record)) {
        report("not a JSON object");
        return [];
      }
      try {
        return unique(handler.record(record as Record<string, unknown>, number), report);
      } catch (err) {
        // A builder's INVALID_INPUT here means a field of the record was unusable: report, go on.
        if (!(err instanceof RecordProblem) && !StowageError.is(err, "INVALID_INPUT")) throw err;
        report(err.message);
        return [];
      }
    },
    end: () => unique(handler.end(), report),
    problems,
    get sessionId() {
      return handler.sessionId();
    },
  };
}

/**
 * Converts a whole transcript, JSONL text or UTF-8 bytes, with a fresh `converter`
 * (`createClaudeCodeTranscriptConverter()`, `createCodexRolloutConverter()`,
 * `createPiSessionConverter()`): every line is pushed in order, then the input is ended.
 */
export function convertTranscript(input: string | Uint8Array, converter: LineConverter): ConversionResult {
  if (typeof converter?.push !== "function" || typeof converter.end !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `converter must be a line converter (createCodexRolloutConverter(), …), got ${describeValue(converter)}`,
    );
  }
  if (typeof input !== "string" && !(input instanceof Uint8Array)) {
    throw new StowageError(
      "INVALID_INPUT",
      `JSONL input must be a string or a Uint8Array, got ${describeValue(input)}`,
    );
  }
  // TextDecoder drops a byte order mark; a string may still start with one.
  const decoded = typeof input === "string" ? input : new TextDecoder().decode(input);
  const text = decoded.startsWith("\uFEFF") ? decoded.slice(1) : decoded;
  const items: ThreadItem[] = [];
  let start = 0;
  while (start <= text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    if (newline !== -1 || end > start) {
      const converted = converter.push(text.slice(start, end));
      for (let index = 0; index < converted.length; index++) items.push(converted[index]!);
    }
    if (newline === -1) break;
    start = newline + 1;
  }
  for (const item of converter.end()) items.push(item);
  return { items, problems: [...converter.problems], sessionId: converter.sessionId };
}
