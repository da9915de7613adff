import { StowageError } from "@stowage/core";

/** One item of a session as the SDK gives it (`AgentInputItem`): a JSON object. */
export type SessionItem = Record<string, unknown>;

/**
 * One operation of a session's log, each one object written create-only at its sequence number:
 * items appended, the newest item taken off (named by where it was added), or everything before
 * it cleared.
 */
export type LogRecord =
  | { op: "add"; items: SessionItem[] }
  | { op: "pop"; target: [seq: number, index: number] }
  | { op: "clear" };

/** An item of the session now, with where it was added: what a pop names. */
export interface LiveItem {
  seq: number;
  index: number;
  item: SessionItem;
}

const FORMAT = 1;

export function encodeLogRecord(sessionId: string, seq: number, record: LogRecord): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({ stowageAgentsSession: FORMAT, sessionId, seq, ...record }),
  );
}

function corrupt(key: string, why: string, reason = "CORRUPT_RECORD"): StowageError {
  return new StowageError("INTEGRITY", `session record ${key} is not readable: ${why}`, {
    reason,
    details: { key },
  });
}

const isItem = (value: unknown): value is SessionItem =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A stored record, checked: INTEGRITY / CORRUPT_RECORD, or FOREIGN_RECORD when it names another session or seq. */
export function decodeLogRecord(key: string, bytes: Uint8Array, sessionId: string, seq: number): LogRecord {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as Record<string, unknown>;
  } catch {
    throw corrupt(key, "it is not JSON");
  }
  if (!isItem(value) || value.stowageAgentsSession !== FORMAT)
    throw corrupt(key, "it is not a session record");
  if (value.sessionId !== sessionId || value.seq !== seq)
    throw corrupt(key, "it was written for another session or place", "FOREIGN_RECORD");
  if (value.op === "add" && Array.isArray(value.items) && value.items.every(isItem))
    return { op: "add", items: value.items };
  if (value.op === "clear") return { op: "clear" };
  const target = value.target;
  if (
    value.op === "pop" &&
    Array.isArray(target) &&
    target.length === 2 &&
    target.every((n) => Number.isSafeInteger(n) && n >= 0)
  )
    return { op: "pop", target: target as [number, number] };
  throw corrupt(key, "its operation is unknown");
}

/** The session's items after `records` (in sequence order): what `getItems` returns. */
export function replay(records: readonly { seq: number; record: LogRecord }[]): LiveItem[] {
  let live: LiveItem[] = [];
  for (const { seq, record } of records) {
    if (record.op === "add") {
      for (const [index, item] of record.items.entries()) live.push({ seq, index, item });
    } else if (record.op === "clear") live = [];
    else {
      const [targetSeq, targetIndex] = record.target;
      const at = live.findIndex((entry) => entry.seq === targetSeq && entry.index === targetIndex);
      if (at >= 0) live.splice(at, 1);
    }
  }
  return live;
}
