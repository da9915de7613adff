import { randomBytes } from "node:crypto";
import { describeValue, type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import {
  checkedRow,
  type DeletionAuditInput,
  type DeletionAuditRow,
  parsedRow,
} from "./deletion-audit-rows.js";

/**
 * How long the audit keeps a row: 400 days, longer than anything it records is kept (stored
 * sessions 7 days by default, uploads by the deployment's retention, a trash's grace period), so
 * the row of a deletion outlives every trace of what went.
 */
export const DELETION_AUDIT_RETENTION_DAYS = 400;
/** Rows per stored object: a garbage collection that removes 10,000 blobs writes 20 objects. */
const ROWS_PER_OBJECT = 500;
/** Rows per page of `list` when no limit is given. */
const DEFAULT_AUDIT_PAGE_SIZE = 100;
/** Largest `limit` of `list`. */
const MAX_AUDIT_PAGE_SIZE = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Longest cursor accepted back (what an ObjectStore accepts too). */
const MAX_CURSOR_LENGTH = 4096;

/** Options of {@link DeletionAudit.list}. */
export interface DeletionAuditListOptions extends OperationOptions {
  /** Only rows at or after this time. */
  since?: Date;
  /** The `cursor` of the previous page. */
  cursor?: string;
  /** Rows per page, 1 to 1,000; default 100. */
  limit?: number;
}

/** One page of the audit, oldest first. */
export interface DeletionAuditPage {
  rows: DeletionAuditRow[];
  /** Pass it back for the next page; absent once nothing follows. */
  cursor?: string;
  /** Stored objects met that hold no readable rows (damaged): skipped, counted here. */
  unreadable: number;
}

/**
 * One principal's (or the deployment's) append-only log of what was deleted. Every append is its
 * own object, written create-only (`ifNoneMatch: "*"`) under a fresh name: two processes
 * appending at once each write their own object, and no row is ever lost to a read-modify-write.
 * Objects are grouped by day (`<YYYY-MM-DD>/<ms>-<sequence>-<random>.json`), one per deletion
 * event (a session's deletion, a sweep batch per principal, a collection per principal): growth
 * follows deletion events, not rows, and `prune` drops whole days past the retention.
 */
export interface DeletionAudit {
  /** Appends rows (their `at` defaults to now); nothing is written for an empty list. */
  append(rows: readonly DeletionAuditInput[], options?: OperationOptions): Promise<void>;
  /** Rows oldest first, a page at a time. INVALID_INPUT for a cursor or limit this log did not give. */
  list(options?: DeletionAuditListOptions): Promise<DeletionAuditPage>;
}

/** What the audit's clock and names come from; tests pass their own clock. */
export interface DeletionAuditOptions {
  now?: () => Date;
}

const dayOf = (date: Date) => date.toISOString().slice(0, 10);

interface Cursor {
  /** The object the last row came from. */
  key: string;
  /** How many of its rows were given. */
  given: number;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.key, cursor.given])).toString("base64url");
}

function decodeCursor(value: string, namespace: string): Cursor {
  const refuse = () =>
    new StowageError("INVALID_INPUT", `cursor must be one this audit gave, got ${describeValue(value)}`);
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_CURSOR_LENGTH) throw refuse();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, "base64url").toString("utf8"));
  } catch {
    throw refuse();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw refuse();
  const [key, given] = parsed as [unknown, unknown];
  if (
    typeof key !== "string" ||
    !key.startsWith(namespace) ||
    !Number.isSafeInteger(given) ||
    (given as number) < 0
  ) {
    throw refuse();
  }
  return { key, given: given as number };
}

function checkLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_AUDIT_PAGE_SIZE;
  if (!Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_AUDIT_PAGE_SIZE) {
    throw new StowageError(
      "INVALID_INPUT",
      `limit must be an integer from 1 to ${MAX_AUDIT_PAGE_SIZE}, got ${describeValue(limit)}`,
      { details: { limit: MAX_AUDIT_PAGE_SIZE } },
    );
  }
  return limit as number;
}

/** The rows of one stored object; undefined when it holds none that parse. */
function rowsIn(bytes: Uint8Array): DeletionAuditRow[] | undefined {
  try {
    const value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as { rows?: unknown };
    if (!Array.isArray(value?.rows)) return undefined;
    const rows = value.rows.map(parsedRow);
    return rows.every((row) => row !== undefined) ? (rows as DeletionAuditRow[]) : undefined;
  } catch {
    return undefined;
  }
}

/** Appends of this process so far: the second part of each object's name. */
let appendSequence = 0;

/** Writes `rows` as one new object of today's day, retrying only a name another writer took. */
async function writeObject(
  store: ObjectStore,
  namespace: string,
  rows: readonly DeletionAuditRow[],
  at: Date,
  options: OperationOptions,
): Promise<void> {
  const body = new TextEncoder().encode(JSON.stringify({ rows }));
  for (;;) {
    // The sequence keeps this process's appends of one millisecond in the order it made them
    // (the log lists by name); the random part keeps other processes' names apart.
    const sequence = (appendSequence++).toString(36).padStart(11, "0");
    const name = `${String(at.getTime()).padStart(15, "0")}-${sequence}-${randomBytes(6).toString("hex")}.json`;
    try {
      await store.put(`${namespace}${dayOf(at)}/${name}`, body, {
        ...options,
        ifNoneMatch: "*",
        contentType: "application/json",
      });
      return;
    } catch (err) {
      if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
    }
  }
}

/**
 * The deletion audit kept under `namespace` (`deletion-audit/user/alice/`) in `store`; see
 * {@link DeletionAudit}.
 */
export function deletionAuditAt(
  store: ObjectStore,
  namespace: string,
  options: DeletionAuditOptions = {},
): DeletionAudit {
  const now = options.now ?? (() => new Date());
  return {
    async append(inputs, operation = {}) {
      if (!Array.isArray(inputs)) {
        throw new StowageError("INVALID_INPUT", `rows must be an array, got ${describeValue(inputs)}`);
      }
      const at = now();
      const rows = inputs.map((input) => checkedRow(input, at));
      for (let start = 0; start < rows.length; start += ROWS_PER_OBJECT) {
        await writeObject(store, namespace, rows.slice(start, start + ROWS_PER_OBJECT), at, operation);
      }
    },
    async list(listOptions = {}) {
      const limit = checkLimit(listOptions.limit);
      const { since, signal } = listOptions;
      if (since !== undefined && (!(since instanceof Date) || Number.isNaN(since.getTime()))) {
        throw new StowageError("INVALID_INPUT", `since must be a Date, got ${describeValue(since)}`);
      }
      const after =
        listOptions.cursor === undefined ? undefined : decodeCursor(listOptions.cursor, namespace);
      // An object's day is the day it was written, never before any of its rows: days before the
      // one of `since` are skipped without being read.
      const firstKey = since === undefined ? "" : `${namespace}${dayOf(since)}/`;
      const rows: DeletionAuditRow[] = [];
      let unreadable = 0;
      const io = signal ? { signal } : {};
      for await (const item of store.iterate({ prefix: namespace, ...io })) {
        if (item.key < firstKey || (after && item.key < after.key)) continue;
        const bytes = await store.get(item.key, io);
        if (bytes === null) continue;
        const stored = rowsIn(bytes);
        if (stored === undefined) {
          if (!after || item.key !== after.key) unreadable++;
          continue;
        }
        const skip = after && item.key === after.key ? after.given : 0;
        for (let index = skip; index < stored.length; index++) {
          const row = stored[index]!;
          if (since !== undefined && Date.parse(row.at) < since.getTime()) continue;
          if (rows.length === limit) {
            return { rows, cursor: encodeCursor({ key: item.key, given: index }), unreadable };
          }
          rows.push(row);
        }
      }
      return { rows, unreadable };
    },
  };
}

/**
 * Removes every audit object below `root` written before the retention's start: whole days,
 * never a row younger than `retentionDays`. Returns how many objects went.
 */
export async function pruneDeletionAudits(
  store: ObjectStore,
  root: string,
  options: OperationOptions & { now?: Date; retentionDays?: number } = {},
): Promise<number> {
  const { now = new Date(), retentionDays = DELETION_AUDIT_RETENTION_DAYS, signal } = options;
  const cutoff = dayOf(new Date(now.getTime() - retentionDays * DAY_MS));
  const io = signal ? { signal } : {};
  let removed = 0;
  for await (const item of store.iterate({ prefix: root, ...io })) {
    const day = /\/(\d{4}-\d{2}-\d{2})\/[^/]+\.json$/.exec(item.key)?.[1];
    if (day === undefined || day >= cutoff) continue;
    await store.delete(item.key, io);
    removed++;
  }
  return removed;
}
