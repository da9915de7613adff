import { assertSafeId, describeValue, type OperationOptions, StowageError } from "@stowage/core";
import { z } from "zod";
import type { BudgetViolation } from "../budget/check-budget.js";
import { BUDGET_FIELDS, type BudgetField } from "../budget/context-budget.js";
import {
  MAX_PROMPT_METRICS_COUNT,
  type PromptMetrics,
  type PromptMetricsRecord,
  type PromptWarning,
  type PromptWarningKind,
} from "../metrics/prompt-metrics.js";

/** The warning kinds, in the order summaries list them. */
export const PROMPT_WARNING_KINDS: readonly PromptWarningKind[] = Object.freeze([
  "hot_state_tokens",
  "artifact_index_entries",
  "prompt_tokens",
  "budget_violations",
]);

/** One model call in a session's metrics log: the `prompt_metrics` record with what it raised. */
export interface PromptMetricsEntry {
  type: "prompt_metrics_entry";
  session: string;
  /** 1 for the session's first recorded call, then one more per call. */
  turn: number;
  /** When it was appended (ISO 8601). */
  recorded_at: string;
  /** The stored hot-state version the call was made with, when the caller said so. */
  hot_state_version: number | null;
  record: PromptMetricsRecord;
  /** The regression warnings of this call, recorded beside its record. */
  warnings: PromptWarning[];
  /** Every budget violation of this call (`record.budget_violations` counts them). */
  violations: BudgetViolation[];
}

/** Options of `append`. */
export interface AppendPromptMetricsOptions extends OperationOptions {
  /** The stored hot-state version (`HotStateVersion.version`) this call was made with. */
  hotStateVersion?: number;
}

/** Options of `series`. */
export interface PromptMetricsSeriesOptions extends OperationOptions {
  /** Only entries after this turn. Default 0 (all). */
  afterTurn?: number;
  /** At most this many entries (the first ones after `afterTurn`). Default: every one. */
  limit?: number;
}

/** A session's metrics log: append one entry per model call, read the series back in turn order. */
export interface PromptMetricsLog {
  /** Appends `measurePrompt`'s result under its record's session; returns the stored entry. */
  append(metrics: PromptMetrics, options?: AppendPromptMetricsOptions): Promise<PromptMetricsEntry>;
  /** The session's entries in turn order (empty for a session without any). */
  series(sessionId: string, options?: PromptMetricsSeriesOptions): Promise<PromptMetricsEntry[]>;
  /**
   * Deletes every entry of the session (none is not an error); its next append is turn 1 again.
   * For a session whose model calls have stopped: an append racing the deletion may survive it.
   */
  deleteSession(sessionId: string, options?: { signal?: AbortSignal }): Promise<void>;
}

// Bounded as PostgreSQL's integer columns are, so a record one log keeps every log keeps.
const count = z.number().int().nonnegative().max(MAX_PROMPT_METRICS_COUNT);
const WarningSchema = z.object({
  kind: z.enum(PROMPT_WARNING_KINDS as [PromptWarningKind, ...PromptWarningKind[]]),
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
const RecordSchema = z.object({
  type: z.literal("prompt_metrics"),
  session: z.string(),
  run: z.string().nullable(),
  hs_tokens: count,
  hs_bytes: count,
  hs_truncated: z.boolean(),
  artifacts: count,
  artifact_types: z.array(z.string()),
  sys_chars: count,
  user_chars: count,
  est_tokens: count.nullable(),
  ref_files: count,
  budget_violations: count,
  budget_ok: z.boolean(),
});
const RecordedAtSchema = z.iso.datetime();
/** A stored entry, checked when it is appended and when it is read back. */
export const PromptMetricsEntrySchema = z.object({
  type: z.literal("prompt_metrics_entry"),
  session: z.string(),
  turn: z.number().int().min(1),
  recorded_at: RecordedAtSchema,
  hot_state_version: z.number().int().min(1).nullable(),
  record: RecordSchema,
  warnings: z.array(WarningSchema),
  violations: z.array(ViolationSchema),
});

/** Which entries a `series` call reads: those after `afterTurn`, at most `limit` (∞: all). */
export interface PromptMetricsSeriesWindow {
  afterTurn: number;
  limit: number;
}

/**
 * The window of `series` options, checked: INVALID_INPUT unless `afterTurn` is a whole number
 * ≥ 0 and `limit` one ≥ 1. For implementations of {@link PromptMetricsLog}.
 */
export function promptMetricsSeriesWindow(
  options: PromptMetricsSeriesOptions = {},
): PromptMetricsSeriesWindow {
  const { afterTurn = 0, limit } = options ?? {};
  if (typeof afterTurn !== "number" || !Number.isSafeInteger(afterTurn) || afterTurn < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `afterTurn must be a whole number ≥ 0, got ${describeValue(afterTurn)}`,
    );
  }
  if (limit === undefined) return { afterTurn, limit: Number.POSITIVE_INFINITY };
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
    throw new StowageError("INVALID_INPUT", `limit must be a whole number ≥ 1, got ${describeValue(limit)}`);
  }
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
 * (a core safe id, since it names where the log is kept) and every field of the record. For
 * implementations of {@link PromptMetricsLog} (the ObjectStore one here, PostgreSQL's).
 */
export function toPromptMetricsEntry(
  metrics: PromptMetrics,
  { turn, recordedAt, hotStateVersion }: PromptMetricsEntryPlace,
): PromptMetricsEntry {
  const session = metrics?.record?.session;
  assertSafeId(session, "prompt_metrics session");
  if (hotStateVersion !== undefined && (!Number.isSafeInteger(hotStateVersion) || hotStateVersion < 1)) {
    throw new StowageError(
      "INVALID_INPUT",
      `hotStateVersion must be a whole number ≥ 1, got ${describeValue(hotStateVersion)}`,
    );
  }
  const entry = {
    type: "prompt_metrics_entry" as const,
    session,
    turn,
    recorded_at: isoTime(recordedAt),
    hot_state_version: hotStateVersion ?? null,
    record: metrics.record,
    warnings: metrics.warnings,
    violations: metrics.budget?.violations,
  };
  const parsed = PromptMetricsEntrySchema.safeParse(entry);
  if (!parsed.success) {
    throw new StowageError("INVALID_INPUT", "metrics must be a measurePrompt result", {
      details: {
        issues: parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
      },
    });
  }
  return parsed.data as PromptMetricsEntry;
}

/**
 * The entry of a checked `entry` at another turn and time, without checking the record again
 * (an append retries turns with the entry it checked once). Throws INVALID_INPUT when the time
 * has no ISO 8601 form the schema accepts (an invalid date, a year past 9999).
 */
export function placeEntry(entry: PromptMetricsEntry, turn: number, recordedAt: Date): PromptMetricsEntry {
  const recorded_at = isoTime(recordedAt);
  if (!RecordedAtSchema.safeParse(recorded_at).success) {
    throw new StowageError("INVALID_INPUT", `the clock returned ${describeValue(recordedAt)}, not a time`);
  }
  return { ...entry, turn, recorded_at };
}

/** Reads one stored entry back; `null` when it is damaged (the caller logs it). */
export function parseEntry(value: unknown, sessionId: string): PromptMetricsEntry | null {
  const parsed = PromptMetricsEntrySchema.safeParse(value);
  return parsed.success && parsed.data.session === sessionId ? (parsed.data as PromptMetricsEntry) : null;
}
