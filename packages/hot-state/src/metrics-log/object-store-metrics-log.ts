import {
  assertKeyDirectoryPrefix,
  assertSafeId,
  consoleLogger,
  type Logger,
  mapConcurrent,
  type ObjectStore,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import type { PromptMetrics } from "../metrics/prompt-metrics.js";
import { assertAtomicStore } from "../store/atomic-store.js";
import {
  appendEntry,
  getTurn,
  type LogContext,
  MAX_PROMPT_METRICS_TURN,
  newestSegment,
  READ_CONCURRENCY,
  segmentKey,
} from "./metrics-log-append.js";
import {
  type AppendPromptMetricsOptions,
  type PromptMetricsEntry,
  type PromptMetricsLog,
  type PromptMetricsSeriesOptions,
  type PromptMetricsSeriesWindow,
  parseEntry,
  promptMetricsSeriesWindow,
  toPromptMetricsEntry,
} from "./prompt-metrics-entry.js";

/** Full re-reads of a series when a concurrent compaction removed what was listed. */
const MAX_READ_ATTEMPTS = 5;
/** Objects `deleteSession` deletes at once. */
const DELETE_CONCURRENCY = 16;
const decoder = new TextDecoder();

/** Options of `createPromptMetricsLog`. */
export interface PromptMetricsLogOptions {
  /** Any ObjectStore whose create-only puts are atomic (`capabilities.atomicCreateOnly`); any other is refused (`NOT_ATOMIC_STORE`). */
  store: ObjectStore;
  /** Key prefix, `""` or ending in `/`. Default `"prompt-metrics/"`. */
  prefix?: string;
  /** Clock of `recorded_at`. Default `new Date()`. */
  now?: () => Date;
  /** Where damaged entries and failed compactions are reported. Default `consoleLogger`. */
  logger?: Logger;
}

/** Parses lines of turns first, first+1, …: those after `afterTurn` until `into` holds `limit`; a damaged one logged. */
function parseLines(
  ctx: LogContext,
  session: string,
  text: string,
  first: number,
  into: PromptMetricsEntry[],
  { afterTurn, limit }: PromptMetricsSeriesWindow,
) {
  let turn = first - 1;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (into.length >= limit) return;
    if (++turn <= afterTurn) continue; // before the window: counted, not parsed
    let entry: PromptMetricsEntry | null = null;
    try {
      entry = parseEntry(JSON.parse(line), session);
    } catch {}
    if (entry !== null && entry.turn === turn) into.push(entry);
    else
      ctx.logger.warn(
        { turn },
        `prompt metrics of session ${session}: turn ${turn} is damaged and was skipped`,
      );
  }
}

/** The window of the series: the newest segment and the turns after it; null when compacted meanwhile. */
async function readOnce(
  ctx: LogContext,
  session: string,
  window: PromptMetricsSeriesWindow,
  op: OperationOptions,
) {
  const entries: PromptMetricsEntry[] = [];
  const segment = await newestSegment(ctx, session, op);
  let next = Math.max(segment, window.afterTurn) + 1;
  const turnBatch = () => {
    const turns = Array.from({ length: READ_CONCURRENCY }, (_, i) => next + i).filter(
      (turn) => turn <= MAX_PROMPT_METRICS_TURN,
    );
    const read = mapConcurrent(turns, READ_CONCURRENCY, (turn) => getTurn(ctx, session, turn, op));
    // Marked handled now: its failure may come while the segment is awaited, and is rethrown
    // where the batch is awaited.
    read.catch(() => {});
    return { turns, read };
  };
  // The segment and the first turns after it are read at once: one round trip, not two.
  let batch = turnBatch();
  const settled = () => batch.read.catch(() => {}); // before returning: no read left running
  if (segment > window.afterTurn) {
    const bytes = await ctx.store.get(segmentKey(ctx, session, segment), op).catch(async (err) => {
      await settled();
      throw err;
    });
    if (bytes === null) {
      await settled();
      return null; // compacted further meanwhile: list again
    }
    parseLines(ctx, session, decoder.decode(bytes), 1, entries, window);
  }
  for (; ; batch = turnBatch()) {
    if (batch.turns.length === 0 || entries.length >= window.limit) {
      await settled();
      return entries;
    }
    for (const [i, bytes] of (await batch.read).entries()) {
      if (bytes === null) return entries; // turns are contiguous: the first missing one is the end
      parseLines(ctx, session, decoder.decode(bytes), batch.turns[i]!, entries, window);
    }
    next += batch.turns.length;
  }
}

/**
 * The `append` of a metrics log: checks the metrics once, before any I/O (the session names
 * where the entry goes), then appends for one session in this process one after another (they
 * would only race each other for turns).
 */
function serialAppends(ctx: LogContext) {
  const queues = new Map<string, Promise<unknown>>();
  return async (metrics: PromptMetrics, op: AppendPromptMetricsOptions = {}): Promise<PromptMetricsEntry> => {
    const { hotStateVersion, ...operation } = op;
    const checked = toPromptMetricsEntry(metrics, { turn: 1, recordedAt: ctx.now(), hotStateVersion });
    const session = checked.session;
    const run = () => appendEntry(ctx, session, checked, operation);
    const next = (queues.get(session) ?? Promise.resolve()).then(run, run);
    const settled = next.catch(() => {});
    queues.set(session, settled);
    void settled.then(() => queues.get(session) === settled && queues.delete(session));
    return next;
  };
}

/**
 * A metrics log over any ObjectStore, in JSON Lines. Each append is one create-only object
 * `<prefix><session>/turns/<turn>.json`, so appends of several writers (processes, replicas) never
 * overwrite each other. Turns are contiguous from 1, so the end of a log is found by probing, never
 * by listing every turn. Every so often the writer concatenates turns 1…n into a segment
 * `<prefix><session>/segments/<n>.jsonl` and deletes the older one; a read takes the newest
 * segment and the turns after it. Turn objects are kept: they are the log, segments its copy.
 */
export function createPromptMetricsLog(options: PromptMetricsLogOptions): PromptMetricsLog {
  const { store, prefix = "prompt-metrics/", now = () => new Date(), logger = consoleLogger } = options ?? {};
  assertAtomicStore(store as ObjectStore, "createPromptMetricsLog");
  assertKeyDirectoryPrefix(prefix, "metrics log prefix");
  const ctx: LogContext = { store: store as ObjectStore, prefix, now, logger, tails: new Map() };
  return Object.freeze({
    append: serialAppends(ctx),
    async series(sessionId: string, op: PromptMetricsSeriesOptions = {}) {
      assertSafeId(sessionId, "sessionId");
      const window = promptMetricsSeriesWindow(op);
      for (let attempt = 0; attempt < MAX_READ_ATTEMPTS; attempt++) {
        const entries = await readOnce(ctx, sessionId, window, op.signal ? { signal: op.signal } : {});
        if (entries !== null) return entries;
      }
      throw new StowageError(
        "UNAVAILABLE",
        `prompt metrics of session ${sessionId} kept changing while being read; try again`,
      );
    },
    /** Every object of the session's log, then what this log remembers of its tail. */
    async deleteSession(sessionId: string, op: OperationOptions = {}) {
      assertSafeId(sessionId, "sessionId");
      const io = op.signal ? { signal: op.signal } : {};
      const keys: string[] = [];
      for await (const item of ctx.store.iterate({ prefix: `${prefix}${sessionId}/`, ...io }))
        keys.push(item.key);
      await mapConcurrent(keys, DELETE_CONCURRENCY, (key) => ctx.store.delete(key, io), op.signal);
      ctx.tails.delete(sessionId);
    },
  });
}
