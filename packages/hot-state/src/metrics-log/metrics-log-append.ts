import {
  type Logger,
  mapConcurrent,
  type ObjectStore,
  type OperationOptions,
  pushAll,
  StowageError,
} from "@stowage/core";
import { lastContiguous } from "../store/last-contiguous.js";
import { type PromptMetricsEntry, placeEntry } from "./prompt-metrics-entry.js";

/** The highest turn a session's log can reach (keys hold 12 digits). */
export const MAX_PROMPT_METRICS_TURN = 999_999_999_999;
/** Turn objects read at once. */
export const READ_CONCURRENCY = 32;
/** Turns appended after the last segment before they are compacted into a new one (at least). */
const COMPACT_MIN_TURNS = 64;
/** Create-only attempts of one append before it gives up (each loss means another writer appended). */
const MAX_APPEND_ATTEMPTS = 32;
const SEGMENT_NAME = /^(\d{12})\.jsonl$/;

/** What the functions of one metrics log share. */
export interface LogContext {
  store: ObjectStore;
  prefix: string;
  now: () => Date;
  logger: Logger;
  /** What this log knows of each session's end. */
  tails: Map<string, SessionTail>;
}

/**
 * A session's end as this log knows it: the newest turn known to exist, the newest segment (it
 * holds turns 1…segment), and the lines of turns segment+1…lastTurn when this log wrote them all.
 */
interface SessionTail {
  lastTurn: number;
  segment: number;
  lines: Uint8Array[] | null;
}

const digits = (n: number) => String(n).padStart(12, "0");
export const turnKey = (ctx: LogContext, session: string, turn: number) =>
  `${ctx.prefix}${session}/turns/${digits(turn)}.json`;
const segmentsPrefix = (ctx: LogContext, session: string) => `${ctx.prefix}${session}/segments/`;
export const segmentKey = (ctx: LogContext, session: string, turn: number) =>
  `${segmentsPrefix(ctx, session)}${digits(turn)}.jsonl`;
const encoder = new TextEncoder();
export const getTurn = (ctx: LogContext, session: string, turn: number, op: OperationOptions) =>
  ctx.store.get(turnKey(ctx, session, turn), op);

export async function newestSegment(ctx: LogContext, session: string, op: OperationOptions): Promise<number> {
  const prefix = segmentsPrefix(ctx, session);
  let newest = 0;
  for await (const item of ctx.store.iterate({ prefix, signal: op.signal })) {
    const match = SEGMENT_NAME.exec(item.key.slice(prefix.length));
    if (match) newest = Math.max(newest, Number(match[1]));
  }
  return newest;
}

const lastTurnFrom = (ctx: LogContext, session: string, known: number, op: OperationOptions) =>
  lastContiguous(
    known,
    MAX_PROMPT_METRICS_TURN,
    async (turn) => (await ctx.store.head(turnKey(ctx, session, turn), op)) !== null,
  );

/** The session's tail as this log knows it; read from the store when `fresh` or unknown. */
async function tailOf(ctx: LogContext, session: string, op: OperationOptions, fresh = false) {
  let tail = fresh ? undefined : ctx.tails.get(session);
  if (!tail) {
    const segment = await newestSegment(ctx, session, op);
    tail = { segment, lastTurn: await lastTurnFrom(ctx, session, segment, op), lines: null };
    ctx.tails.set(session, tail);
  }
  return tail;
}

/** Writes a segment of turns 1…lastTurn and deletes the older one; a failure is logged, the turns stay. */
async function compact(ctx: LogContext, session: string, tail: SessionTail, op: OperationOptions) {
  const { segment: from, lastTurn: to } = tail;
  try {
    const parts: Uint8Array[] = [];
    if (from > 0) {
      const previous = await ctx.store.get(segmentKey(ctx, session, from), op);
      if (previous === null) {
        // Another writer compacted further and removed it: learn its segment, try another time.
        tail.segment = await newestSegment(ctx, session, op);
        tail.lines = null;
        return;
      }
      parts.push(previous);
    }
    let lines = tail.lines;
    if (lines === null || lines.length !== to - from) {
      const turns = Array.from({ length: to - from }, (_, i) => from + 1 + i);
      const read = await mapConcurrent(turns, READ_CONCURRENCY, (turn) => getTurn(ctx, session, turn, op));
      if (read.some((bytes) => bytes === null)) return; // cannot happen while turns are kept; skip
      lines = read as Uint8Array[];
    }
    pushAll(parts, lines);
    try {
      await ctx.store.put(segmentKey(ctx, session, to), Buffer.concat(parts), { ...op, ifNoneMatch: "*" });
    } catch (err) {
      if (!StowageError.is(err, "ALREADY_EXISTS")) throw err; // the same turns, written by another writer
    }
    if (from > 0) await ctx.store.delete(segmentKey(ctx, session, from), op);
    tail.lines = tail.lastTurn === to ? [] : null;
    tail.segment = Math.max(tail.segment, to);
  } catch (err) {
    if (StowageError.is(err, "ABORTED")) throw err;
    ctx.logger.warn(
      { error: err instanceof Error ? err.message : String(err) },
      `prompt metrics of session ${session}: compaction up to turn ${to} failed; the turns are kept`,
    );
  }
}

/**
 * Appends a checked entry at the session's next free turn, create-only: the loser of a turn takes
 * the next one. Every so often (when the turns since the last segment reach a quarter of it, at
 * least 64) the turns are compacted into a new segment.
 */
export async function appendEntry(
  ctx: LogContext,
  session: string,
  checked: PromptMetricsEntry,
  op: OperationOptions,
): Promise<PromptMetricsEntry> {
  let tail = await tailOf(ctx, session, op);
  for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
    const turn = tail.lastTurn + 1;
    if (turn > MAX_PROMPT_METRICS_TURN) {
      throw new StowageError("TOO_LARGE", `prompt metrics of session ${session} reached its last turn`);
    }
    const entry = placeEntry(checked, turn, ctx.now());
    const line = encoder.encode(`${JSON.stringify(entry)}\n`);
    // The known tail is a hint: the session's turns may have been deleted since (a deleted
    // session written again). The turn before this one must still be there; asked while the
    // put runs, so it costs no extra round trip.
    const before =
      turn > 1 ? ctx.store.head(turnKey(ctx, session, turn - 1), op) : Promise.resolve("first turn");
    before.catch(() => {}); // awaited below; a failure meanwhile is not unhandled
    try {
      await ctx.store.put(turnKey(ctx, session, turn), line, {
        ...op,
        ifNoneMatch: "*",
        contentType: "application/json",
      });
    } catch (err) {
      await before.catch(() => {});
      if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
      // Another writer appended this turn: catch up and take the next free one.
      tail.lastTurn = await lastTurnFrom(ctx, session, turn, op);
      tail.lines = null;
      continue;
    }
    if ((await before) === null) {
      // Written past a gap that readers would stop at: take it back and start from the store.
      await ctx.store.delete(turnKey(ctx, session, turn), op);
      tail = await tailOf(ctx, session, op, true);
      continue;
    }
    tail.lastTurn = turn;
    tail.lines?.push(line);
    if (turn - tail.segment >= Math.max(COMPACT_MIN_TURNS, Math.floor(tail.segment / 4))) {
      await compact(ctx, session, tail, op);
    }
    return entry;
  }
  throw new StowageError(
    "CONFLICT",
    `prompt metrics of session ${session}: ${MAX_APPEND_ATTEMPTS} appends in a row lost their turn to other writers`,
    { details: { session } },
  );
}
