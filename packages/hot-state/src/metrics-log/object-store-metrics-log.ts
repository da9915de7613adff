import {
  assertKeyDirectoryPrefix,
  assertSafeId,
  consoleLogger,
  type Logger,
  mapConcurrent,
  type ObjectStore,
  type OperationOptions,
  pushAll,
  StowageError,
} from "@stowage/core";
import { assertAtomicStore } from "../store/atomic-store.js";
import { lastContiguous } from "../store/last-contiguous.js";
import {
  type PromptMetricsEntry,
  type PromptMetricsLog,
  type PromptMetricsSeriesOptions,
  type PromptMetricsSeriesWindow,
  parseEntry,
  placeEntry,
  promptMetricsSeriesWindow,
} from "./prompt-metrics-entry.js";
import { serialAppends } from "./serial-appends.js";

/** Where metrics live inside the store unless a prefix is given. */
export const DEFAULT_PROMPT_METRICS_PREFIX = "prompt-metrics/";
/** The highest turn a session's log can reach (keys hold 12 digits). */
export const MAX_PROMPT_METRICS_TURN = 999_999_999_999;

/** Turns appended after the last segment before they are compacted into a new one (at least). */
const COMPACT_MIN_TURNS = 64;
/** Create-only attempts of one append before it gives up (each loss means another writer appended). */
const MAX_APPEND_ATTEMPTS = 32;
/** Full re-reads of a series when a concurrent compaction removed what was listed. */
const MAX_READ_ATTEMPTS = 5;
/** Turn objects read at once. */
const READ_CONCURRENCY = 32;
/** Objects `deleteSession` deletes at once. */
const DELETE_CONCURRENCY = 16;

/** Options of `createPromptMetricsLog`. */
export interface PromptMetricsLogOptions {
  /** Any ObjectStore whose create-only puts are atomic (`capabilities.atomicCreateOnly`); any other is refused (`NOT_ATOMIC_STORE`). */
  store: ObjectStore;
  /** Key prefix, `""` or ending in `/`. Default {@link DEFAULT_PROMPT_METRICS_PREFIX}. */
  prefix?: string;
  /** Clock of `recorded_at`. Default `new Date()`. */
  now?: () => Date;
  /** Where damaged entries and failed compactions are reported. Default `consoleLogger`. */
  logger?: Logger;
}

interface SessionTail {
  /** The newest turn known to exist. */
  lastTurn: number;
  /** The newest segment known (it holds turns 1…segment). */
  segment: number;
  /** The lines of turns segment+1…lastTurn when this log wrote all of them, else null. */
  lines: Uint8Array[] | null;
}

const digits = (n: number) => String(n).padStart(12, "0");
const SEGMENT_NAME = /^(\d{12})\.jsonl$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

/**
 * A metrics log over any ObjectStore, in JSON Lines. Each append is one create-only object
 * `<prefix><session>/turns/<turn>.json`, so appends of several writers (processes, replicas) never
 * overwrite each other: the loser of a turn takes the next one. Turns are contiguous from 1, so
 * the end of a log is found by probing, never by listing every turn. Every so often (when the
 * turns since the last segment reach a quarter of it, at least 64) the writer concatenates them
 * into a segment `<prefix><session>/segments/<turn>.jsonl` holding turns 1…turn, and deletes the
 * older segment; a read takes the newest segment and the turns after it. Turn objects are kept:
 * they are the log, segments are its compacted copy.
 */
export function createPromptMetricsLog(options: PromptMetricsLogOptions): PromptMetricsLog {
  const {
    store,
    prefix = DEFAULT_PROMPT_METRICS_PREFIX,
    now = () => new Date(),
    logger = consoleLogger,
  } = options ?? ({} as PromptMetricsLogOptions);
  assertAtomicStore(store, "createPromptMetricsLog");
  assertKeyDirectoryPrefix(prefix, "metrics log prefix");
  const turnKey = (session: string, turn: number) => `${prefix}${session}/turns/${digits(turn)}.json`;
  const segmentsPrefix = (session: string) => `${prefix}${session}/segments/`;
  const segmentKey = (session: string, turn: number) => `${segmentsPrefix(session)}${digits(turn)}.jsonl`;
  const tails = new Map<string, SessionTail>();

  async function newestSegment(session: string, op: OperationOptions): Promise<number> {
    let newest = 0;
    for await (const item of store.iterate({ prefix: segmentsPrefix(session), signal: op.signal })) {
      const match = SEGMENT_NAME.exec(item.key.slice(segmentsPrefix(session).length));
      if (match) newest = Math.max(newest, Number(match[1]));
    }
    return newest;
  }

  const lastTurnFrom = (session: string, known: number, op: OperationOptions) =>
    lastContiguous(
      known,
      MAX_PROMPT_METRICS_TURN,
      async (turn) => (await store.head(turnKey(session, turn), op)) !== null,
    );

  /** The session's tail as this log knows it; read from the store when `fresh` or unknown. */
  async function tailOf(session: string, op: OperationOptions, fresh = false): Promise<SessionTail> {
    let tail = fresh ? undefined : tails.get(session);
    if (!tail) {
      const segment = await newestSegment(session, op);
      tail = { segment, lastTurn: await lastTurnFrom(session, segment, op), lines: null };
      tails.set(session, tail);
    }
    return tail;
  }

  /** Writes a segment of turns 1…lastTurn; a failure is logged, the appends stay as they are. */
  async function compact(session: string, tail: SessionTail, op: OperationOptions) {
    const { segment: from, lastTurn: to } = tail;
    try {
      const parts: Uint8Array[] = [];
      if (from > 0) {
        const previous = await store.get(segmentKey(session, from), op);
        if (previous === null) {
          // Another writer compacted further and removed it: learn its segment, try another time.
          tail.segment = await newestSegment(session, op);
          tail.lines = null;
          return;
        }
        parts.push(previous);
      }
      let lines = tail.lines;
      if (lines === null || lines.length !== to - from) {
        const turns = Array.from({ length: to - from }, (_, i) => from + 1 + i);
        const read = await mapConcurrent(turns, READ_CONCURRENCY, (turn) =>
          store.get(turnKey(session, turn), op),
        );
        if (read.some((bytes) => bytes === null)) return; // cannot happen while turns are kept; skip
        lines = read as Uint8Array[];
      }
      pushAll(parts, lines);
      try {
        await store.put(segmentKey(session, to), concat(parts), { ...op, ifNoneMatch: "*" });
      } catch (err) {
        if (!StowageError.is(err, "ALREADY_EXISTS")) throw err; // the same turns, written by another writer
      }
      if (from > 0) await store.delete(segmentKey(session, from), op);
      if (tail.lastTurn === to) tail.lines = [];
      else tail.lines = null;
      tail.segment = Math.max(tail.segment, to);
    } catch (err) {
      if (StowageError.is(err, "ABORTED")) throw err;
      logger.warn(
        {
          error: err instanceof Error ? err.message : String(err),
        },
        `prompt metrics of session ${session}: compaction up to turn ${to} failed; the turns are kept`,
      );
    }
  }

  const append = serialAppends(now, appendNow);

  async function appendNow(
    session: string,
    checked: PromptMetricsEntry,
    operation: OperationOptions,
  ): Promise<PromptMetricsEntry> {
    let tail = await tailOf(session, operation);
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
      const turn = tail.lastTurn + 1;
      if (turn > MAX_PROMPT_METRICS_TURN) {
        throw new StowageError(
          "TOO_LARGE",
          `prompt metrics of session ${session} reached turn ${MAX_PROMPT_METRICS_TURN}`,
        );
      }
      const entry = placeEntry(checked, turn, now());
      const line = encoder.encode(`${JSON.stringify(entry)}\n`);
      // The known tail is a hint: the session's turns may have been deleted since (a deleted
      // session written again). The turn before this one must still be there; asked while the
      // put runs, so it costs no extra round trip.
      const before =
        turn > 1 ? store.head(turnKey(session, turn - 1), operation) : Promise.resolve("first turn");
      before.catch(() => {}); // awaited below; a failure meanwhile is not unhandled
      try {
        await store.put(turnKey(session, turn), line, {
          ...operation,
          ifNoneMatch: "*",
          contentType: "application/json",
        });
      } catch (err) {
        await before.catch(() => {});
        if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
        // Another writer appended this turn: catch up and take the next free one.
        tail.lastTurn = await lastTurnFrom(session, turn, operation);
        tail.lines = null;
        continue;
      }
      if ((await before) === null) {
        // Written past a gap that readers would stop at: take it back and start from the store.
        await store.delete(turnKey(session, turn), operation);
        tail = await tailOf(session, operation, true);
        continue;
      }
      tail.lastTurn = turn;
      tail.lines?.push(line);
      if (turn - tail.segment >= Math.max(COMPACT_MIN_TURNS, Math.floor(tail.segment / 4))) {
        await compact(session, tail, operation);
      }
      return entry;
    }
    throw new StowageError(
      "CONFLICT",
      `prompt metrics of session ${session}: ${MAX_APPEND_ATTEMPTS} appends in a row lost their turn to other writers`,
      { details: { session } },
    );
  }

  /**
   * Parses lines expected to be turns first, first+1, …, keeping those after `afterTurn` until
   * `into` holds `limit`; a damaged line is logged and skipped.
   */
  function parseLines(
    session: string,
    text: string,
    first: number,
    into: PromptMetricsEntry[],
    { afterTurn, limit }: PromptMetricsSeriesWindow,
  ) {
    let turn = first;
    for (const line of text.split("\n")) {
      if (line === "") continue;
      if (into.length >= limit) return;
      if (turn <= afterTurn) {
        turn++; // before the window: counted, not parsed
        continue;
      }
      let entry: PromptMetricsEntry | null = null;
      try {
        entry = parseEntry(JSON.parse(line), session);
      } catch {
        entry = null;
      }
      if (entry === null || entry.turn !== turn) {
        logger.warn(
          { turn },
          `prompt metrics of session ${session}: turn ${turn} is damaged and was skipped`,
        );
      } else {
        into.push(entry);
      }
      turn++;
    }
  }

  async function readOnce(
    session: string,
    window: PromptMetricsSeriesWindow,
    op: OperationOptions,
  ): Promise<PromptMetricsEntry[] | null> {
    const { afterTurn, limit } = window;
    const entries: PromptMetricsEntry[] = [];
    const segment = await newestSegment(session, op);
    let next = Math.max(segment, afterTurn) + 1;
    const turnBatch = () => {
      const turns = Array.from({ length: READ_CONCURRENCY }, (_, i) => next + i).filter(
        (turn) => turn <= MAX_PROMPT_METRICS_TURN,
      );
      const read = mapConcurrent(turns, READ_CONCURRENCY, (turn) => store.get(turnKey(session, turn), op));
      // Marked handled now: its failure may come while the segment is awaited, and is rethrown
      // where the batch is awaited.
      read.catch(() => {});
      return { turns, read };
    };
    // The segment and the first turns after it are read at once: one round trip, not two.
    let batch = turnBatch();
    if (segment > afterTurn) {
      const bytes = await store.get(segmentKey(session, segment), op).catch(async (err) => {
        await batch.read.catch(() => {}); // settled before giving up: no read left running
        throw err;
      });
      if (bytes === null) {
        await batch.read.catch(() => {});
        return null; // compacted further meanwhile: list again
      }
      parseLines(session, decoder.decode(bytes), 1, entries, window);
    }
    for (; ; batch = turnBatch()) {
      const { turns } = batch;
      if (turns.length === 0 || entries.length >= limit) {
        await batch.read.catch(() => {}); // settled before returning: no read left running
        return entries;
      }
      const read = await batch.read;
      for (const [i, bytes] of read.entries()) {
        if (bytes === null) return entries; // turns are contiguous: the first missing one is the end
        parseLines(session, decoder.decode(bytes), turns[i]!, entries, window);
      }
      next += turns.length;
    }
  }

  async function series(
    sessionId: string,
    op: PromptMetricsSeriesOptions = {},
  ): Promise<PromptMetricsEntry[]> {
    assertSafeId(sessionId, "sessionId");
    const window = promptMetricsSeriesWindow(op);
    const { afterTurn: _after, limit: _limit, ...operation } = op;
    for (let attempt = 0; attempt < MAX_READ_ATTEMPTS; attempt++) {
      const entries = await readOnce(sessionId, window, operation);
      if (entries !== null) return entries;
    }
    throw new StowageError(
      "UNAVAILABLE",
      `prompt metrics of session ${sessionId} kept changing while being read; try again`,
    );
  }

  /** Every object of the session's log, then what this log remembers of its tail. */
  async function deleteSession(sessionId: string, op: OperationOptions = {}): Promise<void> {
    assertSafeId(sessionId, "sessionId");
    const keys: string[] = [];
    for await (const item of store.iterate({ prefix: `${prefix}${sessionId}/`, signal: op.signal })) {
      keys.push(item.key);
    }
    await mapConcurrent(
      keys,
      DELETE_CONCURRENCY,
      (key) => store.delete(key, op.signal ? { signal: op.signal } : {}),
      op.signal,
    );
    tails.delete(sessionId);
  }

  return Object.freeze({ append, series, deleteSession });
}
