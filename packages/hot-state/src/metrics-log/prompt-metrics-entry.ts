import { assertSafeId, type OperationOptions } from "@stowage/core";
import { z } from "zod";
import { BUDGET_FIELDS, type BudgetField } from "../budget/context-budget.js";
import type { PromptMetrics } from "../metrics/prompt-metrics.js";
import { invalidValue, parseOrThrow } from "../schemas/schemas.js";

/** A count of a `prompt_metrics` record: at most PostgreSQL's `integer`, so that every log keeps the same records. */
export const promptMetricsCount = z.int().min(0).max(2_147_483_647);

const RecordSchema = z.object({
  type: z.literal("prompt_metrics"),
  session: z.string(),
  run: z.string().nullable(),
  hs_tokens: promptMetricsCount,
  hs_bytes: promptMetricsCount,
  hs_truncated: z.boolean(),
  artifacts: promptMetricsCount,
  artifact_types: z.array(z.string()),
  sys_chars: promptMetricsCount,
  user_chars: promptMetricsCount,
  est_tokens: promptMetricsCount.nullable(),
  ref_files: promptMetricsCount,
  budget_violations: promptMetricsCount,
  budget_ok: z.boolean(),
});
const WarningSchema = z.object({
  kind: z.enum(["hot_state_tokens", "artifact_index_entries", "prompt_tokens", "budget_violations"]),
  message: z.string(),
  value: z.number(),
  threshold: z.number(),
});
const ViolationSchema = z.object({
  field: z.enum(BUDGET_FIELDS as [BudgetField, ...BudgetField[]]),
  limit: z.number(),
  actual: z.number().nullable(),
  kind: z.enum(["exceeded", "unmeasurable", "missing"]),
  message: z.string(),
});
/** A stored entry, checked when it is appended and when it is read back. */
export const PromptMetricsEntrySchema = z.object({
  type: z.literal("prompt_metrics_entry"),
  session: z.string(),
  turn: z.int().min(1),
  recorded_at: z.iso.datetime(),
  hot_state_version: z.int().min(1).nullable(),
  record: RecordSchema,
  warnings: z.array(WarningSchema),
  violations: z.array(ViolationSchema),
});

/** One model call, as a JSON log record (`est_tokens` is `null` when the counter failed). */
export type PromptMetricsRecord = z.infer<typeof RecordSchema>;
export type PromptWarningKind = PromptWarning["kind"];
/** A limit approached or passed by one prompt; `threshold` is the value above which it is raised. */
export type PromptWarning = z.infer<typeof WarningSchema>;
/** A limit one call passed (`exceeded`) or could not be measured against (`unmeasurable`, `actual` null). */
export type BudgetViolation = z.infer<typeof ViolationSchema>;
/** One model call in a session's log: record, warnings, violations, turn (from 1), hot-state version. */
export type PromptMetricsEntry = z.infer<typeof PromptMetricsEntrySchema>;

/** Options of `append`: the stored hot-state version (`HotStateVersion.version`) this call was made with. */
export interface AppendPromptMetricsOptions extends OperationOptions {
  hotStateVersion?: number;
}

/** Options of `series`: only entries after `afterTurn` (default 0), at most `limit` (default: all). */
export interface PromptMetricsSeriesOptions extends OperationOptions {
  afterTurn?: number;
  limit?: number;
}

/** A session's metrics log: append one entry per model call, read the series back in turn order. */
export interface PromptMetricsLog {
  /** Appends `measurePrompt`'s result under its record's session; returns the stored entry. */
  append(metrics: PromptMetrics, options?: AppendPromptMetricsOptions): Promise<PromptMetricsEntry>;
  /** The session's entries in turn order (empty for a session without any). */
  series(sessionId: string, options?: PromptMetricsSeriesOptions): Promise<PromptMetricsEntry[]>;
  /** Deletes every entry of the session; its next append is turn 1. An append racing it may survive it. */
  deleteSession(sessionId: string, options?: OperationOptions): Promise<void>;
}

/** Which entries a `series` call reads: those after `afterTurn`, at most `limit` (∞: all). */
export interface PromptMetricsSeriesWindow {
  afterTurn: number;
  limit: number;
}

/** The window of `series` options, checked (INVALID_INPUT), for implementations of {@link PromptMetricsLog}. */
export function promptMetricsSeriesWindow(options?: PromptMetricsSeriesOptions): PromptMetricsSeriesWindow {
  const { afterTurn = 0, limit = Number.POSITIVE_INFINITY } = options ?? {};
  const notWhole = (name: string, value: unknown, least: number) =>
    invalidValue(`${name} must be a whole number ≥ ${least}`, value);
  if (!Number.isSafeInteger(afterTurn) || afterTurn < 0) throw notWhole("afterTurn", afterTurn, 0);
  if (limit !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(limit) || limit < 1))
    throw notWhole("limit", limit, 1);
  return { afterTurn, limit };
}

/** The ISO 8601 form of a time; `""` (which the schema refuses) for what is not a valid Date. */
const isoTime = (time: Date): string =>
  time instanceof Date && !Number.isNaN(time.getTime()) ? time.toISOString() : "";

/** Where an entry sits in its session's log. */
export interface PromptMetricsEntryPlace {
  turn: number;
  recordedAt: Date;
  hotStateVersion?: number | undefined;
}

/**
 * Builds the entry of a turn from `measurePrompt`'s result, checking it on the way: the session
 * (a core safe id, since it names where the log is kept), the hot-state version (≥ 1) and every
 * field of the record. For implementations of {@link PromptMetricsLog}.
 */
export function toPromptMetricsEntry(
  metrics: PromptMetrics,
  { turn, recordedAt, hotStateVersion }: PromptMetricsEntryPlace,
): PromptMetricsEntry {
  const session = metrics?.record?.session;
  assertSafeId(session, "prompt_metrics session");
  const entry = {
    ...{ type: "prompt_metrics_entry", session, turn, recorded_at: isoTime(recordedAt) },
    ...{ hot_state_version: hotStateVersion ?? null, record: metrics.record, warnings: metrics.warnings },
    violations: metrics.budget?.violations,
  };
  return parseOrThrow(PromptMetricsEntrySchema, entry, "metrics (a measurePrompt result)");
}
