import { Buffer } from "node:buffer";
import type { StowageErrorCode } from "@stowage/core";
import type { ThreadRef } from "../log/thread-layout.js";
import { parseStoredJson } from "./stored-json.js";

/** The `reason` of the CONFLICT thrown by `post` to a thread whose status is `failed`. */
export const THREAD_FAILED = "THREAD_FAILED";

/** Why a thread failed: the error that failed it. */
export interface ThreadFailure {
  /** The error's code, e.g. `TOO_LARGE`. */
  code: StowageErrorCode;
  /** The error's reason, e.g. `THREAD_ITEM_TOO_LARGE`. */
  reason: string;
  /** When the thread failed (ISO 8601). */
  at: string;
  /** The item that failed it. */
  itemId?: string;
}

/** A thread and its status: `active` until an item fails it, then `failed` for good. */
export interface ThreadInfo extends ThreadRef {
  status: "active" | "failed";
  /** Present when `status` is `failed`. */
  failure?: ThreadFailure;
}

/** The stored record of a thread: `{ jobId, alias, status, failure? }` as one JSON object. */
export function serializeThreadRecord(info: ThreadInfo): Uint8Array {
  return Buffer.from(JSON.stringify(info));
}

/** The status stored in a record's bytes, or why they are not a record. */
export function parseThreadRecord(thread: ThreadRef, bytes: Uint8Array): ThreadInfo | string {
  const parsed = parseStoredJson(bytes);
  if ("problem" in parsed) return parsed.problem;
  const record = parsed.value as Partial<ThreadInfo> | null;
  if (typeof record !== "object" || record === null) return "not a JSON object";
  if (record.status === "active") return { ...thread, status: "active" };
  const failure = record.failure as Partial<ThreadFailure> | undefined;
  if (
    record.status !== "failed" ||
    typeof failure?.code !== "string" ||
    typeof failure.reason !== "string" ||
    typeof failure.at !== "string"
  ) {
    return 'status must be "active", or "failed" with a failure { code, reason, at }';
  }
  const { code, reason, at, itemId } = failure;
  return {
    ...thread,
    status: "failed",
    failure: { code, reason, at, ...(typeof itemId === "string" ? { itemId } : {}) },
  };
}
