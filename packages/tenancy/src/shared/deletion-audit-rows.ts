import { assertSafeId, describeValue, StowageError } from "@stowage/core";

/**
 * One thing a deletion removed: what (`kind`, the store's name in the deployment's table, and
 * `id`), how many bytes when the store knows, who (`by`), when (`at`) and why. Never content.
 */
export interface DeletionAuditRow {
  /** The store's name in the table (`uploads`, `sessionBlobs`, `blobs`…), or `session`. */
  kind: string;
  /** The session id, upload key, blob hash… the store knows the thing by. */
  id: string;
  /** Bytes removed, when the store reports them. */
  bytes?: number;
  /**
   * Who deleted it: the API key id of a request (`key:<id>`), `cli` for the operator's command
   * line, or the sweep that did it: `ttl` (expiry), `retention` (a deployment's retention), `gc`.
   */
  by: string;
  /** ISO 8601 time of the deletion (when its row was written). */
  at: string;
  /** Why, in a few words. */
  reason: string;
  /** The store's own answer (counts, sizes, flags; never content), when it gave more than bytes. */
  report?: Record<string, number | boolean>;
}

/** A row to append; `at` defaults to the time of the append. */
export type DeletionAuditInput = Omit<DeletionAuditRow, "at"> & { at?: string };

const MAX_KIND_LENGTH = 64;
const MAX_ID_LENGTH = 1024;
const MAX_BY_LENGTH = 128;
const MAX_REASON_LENGTH = 500;

function invalid(field: string, value: unknown, accepted: string): StowageError {
  return new StowageError(
    "INVALID_INPUT",
    `deletion audit row: ${field} must be ${accepted}, got ${describeValue(value)}`,
  );
}

function text(row: Record<string, unknown>, field: string, max: number): string {
  const value = row[field];
  if (typeof value !== "string" || value.length === 0 || value.length > max) {
    throw invalid(field, value, `a string of 1 to ${max} characters`);
  }
  return value;
}

/**
 * Only numbers and flags of a store's report are kept: a report is the store's own answer, and
 * the audit must never hold content, whatever a custom store returns.
 */
export function reportFields(report: unknown): Record<string, number | boolean> | undefined {
  if (typeof report !== "object" || report === null || Array.isArray(report)) return undefined;
  const kept: Record<string, number | boolean> = {};
  for (const [name, value] of Object.entries(report)) {
    if (name.length > MAX_KIND_LENGTH) continue;
    if (typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))) {
      kept[name] = value;
    }
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/**
 * Who a deletion is by (`key:<id>`, `cli`, `ttl`…), as every deletion takes it: a safe id of at
 * most 128 characters (letters, digits, ".", "_", ":", "@", "-"), since it is written into audit
 * rows and trash listings that people read; INVALID_INPUT otherwise.
 */
export function assertDeletedBy(by: unknown): asserts by is string {
  assertSafeId(by, "by");
}

/** A row checked field by field, `at` filled in: INVALID_INPUT naming the field otherwise. */
export function checkedRow(input: DeletionAuditInput, now: Date): DeletionAuditRow {
  if (typeof input !== "object" || input === null) throw invalid("row", input, "an object");
  const row = input as unknown as Record<string, unknown>;
  const at = input.at ?? now.toISOString();
  if (typeof at !== "string" || Number.isNaN(Date.parse(at))) throw invalid("at", at, "an ISO 8601 time");
  const bytes = input.bytes;
  if (bytes !== undefined && (!Number.isSafeInteger(bytes) || bytes < 0)) {
    throw invalid("bytes", bytes, "a non-negative integer or absent");
  }
  const report = reportFields(input.report);
  return {
    kind: text(row, "kind", MAX_KIND_LENGTH),
    id: text(row, "id", MAX_ID_LENGTH),
    ...(bytes === undefined ? {} : { bytes }),
    by: text(row, "by", MAX_BY_LENGTH),
    at: new Date(at).toISOString(),
    reason: text(row, "reason", MAX_REASON_LENGTH),
    ...(report === undefined ? {} : { report }),
  };
}

/** A stored row, or undefined when it is not one (a damaged object is skipped, not fatal). */
export function parsedRow(value: unknown): DeletionAuditRow | undefined {
  if (typeof (value as { at?: unknown } | null)?.at !== "string") return undefined;
  try {
    return checkedRow(value as DeletionAuditInput, new Date(0));
  } catch {
    return undefined;
  }
}
