import { Buffer } from "node:buffer";
import { threadItemProblem } from "../schema/parse-thread-item.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";

/** A stored JSON object's value, or why its bytes are not JSON (a torn or foreign object). */
export function parseStoredJson(bytes: Uint8Array): { value: unknown } | { problem: string } {
  try {
    return {
      value: JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")),
    };
  } catch (err) {
    return { problem: `not valid JSON (${(err as Error).message})` };
  }
}

/** The thread item stored in `bytes`, or why they do not hold one. */
export function parseStoredItem(bytes: Uint8Array): ThreadItem | string {
  const parsed = parseStoredJson(bytes);
  if ("problem" in parsed) return parsed.problem;
  const problem = threadItemProblem(parsed.value);
  return problem === undefined ? (parsed.value as ThreadItem) : `not a thread item (${problem})`;
}
