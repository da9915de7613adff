import { assertSafeId, consoleLogger, type Logger, StowageError, throwIfAborted } from "@stowage/core";
import type {
  AppendPromptMetricsOptions,
  PromptMetrics,
  PromptMetricsEntry,
  PromptMetricsLog,
  PromptMetricsSeriesOptions,
} from "@stowage/hot-state";
import {
  PromptMetricsEntrySchema,
  promptMetricsSeriesWindow,
  toPromptMetricsEntry,
} from "@stowage/hot-state/backend";
import { sql } from "drizzle-orm";
import { assertDatabase, rowsOf, type StowageDatabase } from "../database.js";
import { fromDatabaseError } from "../database-errors.js";
import { assertNamespace, DEFAULT_OBJECT_NAMESPACE } from "../object-store-context.js";

/** Options of `createPostgresPromptMetricsLog`. */
export interface PostgresPromptMetricsLogOptions {
  /** A database with Stowage's tables (migration 0005 adds `prompt_metrics`). */
  db: StowageDatabase;
  /** Scopes the sessions: logs with different namespaces share the table, never a session. Default `default`. */
  namespace?: string;
  /** Clock of `recorded_at`. Default `new Date()`. */
  now?: () => Date;
  /** Where damaged rows are reported (they are skipped: the rest of the series stays readable). Default `consoleLogger`. */
  logger?: Logger;
}

/** Inserts lost to another writer of the same turn before an append gives up. */
const MAX_APPEND_ATTEMPTS = 16;

/**
 * `@stowage/hot-state`'s metrics log in the `prompt_metrics` table: one row per model call. An
 * append is one `INSERT … SELECT max(turn) + 1`; two writers of one turn collide on the primary
 * key and the loser inserts again at the next turn. The series is read in turn order.
 */
export function createPostgresPromptMetricsLog(options: PostgresPromptMetricsLogOptions): PromptMetricsLog {
  const db = assertDatabase(options?.db, "createPostgresPromptMetricsLog");
  const namespace = assertNamespace(options.namespace ?? DEFAULT_OBJECT_NAMESPACE);
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? consoleLogger;

  async function append(
    metrics: PromptMetrics,
    op: AppendPromptMetricsOptions = {},
  ): Promise<PromptMetricsEntry> {
    const recordedAt = now();
    // Checked (and the session read) before the database is asked anything.
    const checked = toPromptMetricsEntry(metrics, {
      turn: 1,
      recordedAt,
      hotStateVersion: op.hotStateVersion,
    });
    const { record, warnings, violations, session, hot_state_version } = checked;
    const payload = JSON.stringify({ record, warnings, violations });
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
      let turn: number;
      try {
        const result = await db.execute(sql`
          INSERT INTO prompt_metrics
            (namespace, session_id, turn, recorded_at, hot_state_version, hs_tokens, est_tokens, budget_ok, entry)
          SELECT ${namespace}, ${session}, COALESCE(MAX(turn), 0) + 1, ${recordedAt.toISOString()},
            ${hot_state_version}, ${record.hs_tokens}, ${record.est_tokens}, ${record.budget_ok}, ${payload}
          FROM prompt_metrics WHERE namespace = ${namespace} AND session_id = ${session}
          RETURNING turn`);
        turn = Number(rowsOf(result)[0]!.turn);
      } catch (err) {
        const mapped = fromDatabaseError(err, `append prompt metrics of session ${session}`);
        if (mapped.code === "ALREADY_EXISTS") continue; // another writer took this turn
        throw mapped;
      }
      return { ...checked, turn };
    }
    throw new StowageError(
      "CONFLICT",
      `prompt metrics of session ${session}: ${MAX_APPEND_ATTEMPTS} appends in a row lost their turn to other writers`,
      { details: { session } },
    );
  }

  async function series(
    sessionId: string,
    op: PromptMetricsSeriesOptions = {},
  ): Promise<PromptMetricsEntry[]> {
    assertSafeId(sessionId, "sessionId");
    const { afterTurn, limit } = promptMetricsSeriesWindow(op);
    let rows: Record<string, unknown>[];
    try {
      rows = rowsOf(
        await db.execute(sql`
          SELECT turn, recorded_at, hot_state_version, entry FROM prompt_metrics
          WHERE namespace = ${namespace} AND session_id = ${sessionId} AND turn > ${afterTurn}
          ORDER BY turn
          ${Number.isFinite(limit) ? sql`LIMIT ${limit}` : sql``}`),
      );
    } catch (err) {
      throw fromDatabaseError(err, `read prompt metrics of session ${sessionId}`);
    }
    const entries: PromptMetricsEntry[] = [];
    for (const row of rows) {
      const turn = Number(row.turn);
      const parsed = PromptMetricsEntrySchema.safeParse({
        type: "prompt_metrics_entry",
        session: sessionId,
        turn,
        recorded_at: new Date(row.recorded_at as string | Date).toISOString(),
        hot_state_version: row.hot_state_version === null ? null : Number(row.hot_state_version),
        ...safeJson(row.entry),
      });
      // One damaged row does not hide the rest of the series (a page of it may count one fewer).
      if (parsed.success) entries.push(parsed.data as PromptMetricsEntry);
      else
        logger.warn(
          { turn },
          `prompt metrics of session ${sessionId}: turn ${turn} is damaged and was skipped`,
        );
    }
    return entries;
  }

  async function deleteSession(sessionId: string, op: { signal?: AbortSignal } = {}): Promise<void> {
    assertSafeId(sessionId, "sessionId");
    throwIfAborted(op.signal, "delete prompt metrics");
    try {
      await db.execute(
        sql`DELETE FROM prompt_metrics WHERE namespace = ${namespace} AND session_id = ${sessionId}`,
      );
    } catch (err) {
      throw fromDatabaseError(err, `delete prompt metrics of session ${sessionId}`);
    }
  }

  return Object.freeze({ append, series, deleteSession });
}

function safeJson(text: unknown): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(String(text));
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
