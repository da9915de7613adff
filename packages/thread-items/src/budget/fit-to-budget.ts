import { Buffer } from "node:buffer";
import { describeValue, StowageError } from "@stowage/core";
import { parseThreadItem } from "../schema/parse-thread-item.js";
import {
  type ThreadItem,
  type ThreadItemMetadata,
  TRUNCATABLE_FIELDS,
  type TruncatableField,
} from "../schema/thread-item-schema.js";
import { truncationMarker } from "./truncation-marker.js";
import { utf8Head, utf8Tail } from "./utf8-cut.js";

/** Largest serialized thread item accepted for posting, in UTF-8 bytes (350 KB). */
export const DEFAULT_BUDGET_BYTES = 350_000;
/** UTF-8 bytes kept from the start of a truncated field. */
export const TRUNCATION_HEAD_BYTES = 4096;
/** UTF-8 bytes kept from the end of a truncated field. */
export const TRUNCATION_TAIL_BYTES = 2048;
/** The `reason` of the TOO_LARGE error thrown when an item cannot be made to fit. */
export const THREAD_ITEM_TOO_LARGE = "THREAD_ITEM_TOO_LARGE";
/** Longest `localLogPath` accepted, in UTF-8 bytes (it is repeated in every marker). */
export const MAX_LOCAL_LOG_PATH_BYTES = 1024;

export interface FitToBudgetOptions {
  /** Default {@link DEFAULT_BUDGET_BYTES}. */
  budgetBytes?: number;
  /** Where the full payload is (`ThreadLog.localLogPath`); quoted in every marker and in `metadata.local_log`. */
  localLogPath: string;
}

/** One truncatable field present in the item. */
interface Slot {
  name: TruncatableField;
  /** The field as text: the string itself, or the JSON serialization of any other value. */
  text: string;
  isString: boolean;
  rawBytes?: number;
  serializedBytes?: number;
}

interface Markers {
  names: readonly TruncatableField[];
  localLogPath: string;
}

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function serialize(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (err) {
    throw new StowageError(
      "INVALID_INPUT",
      `thread item must be JSON-serializable: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

/** UTF-8 bytes of the item's JSON serialization, as `fitToBudget` measures it. */
export function measureThreadItem(item: unknown): number {
  const json = serialize(item);
  if (json === undefined)
    throw new StowageError("INVALID_INPUT", `thread item must be an object, got ${describeValue(item)}`);
  return Buffer.byteLength(json);
}

function toolOf(item: ThreadItem): Record<string, unknown> | undefined {
  const tool = (item.metadata as Record<string, unknown> | undefined)?.tool;
  return typeof tool === "object" && tool !== null && !Array.isArray(tool)
    ? (tool as Record<string, unknown>)
    : undefined;
}

function fieldValue(item: ThreadItem, name: TruncatableField): unknown {
  switch (name) {
    case "tool.output":
      return toolOf(item)?.output;
    case "tool.input":
      return toolOf(item)?.input;
    case "text":
      return (item.metadata as Record<string, unknown> | undefined)?.text;
    case "content[0].text":
      return item.content[0]?.text;
  }
}

function slotsOf(item: ThreadItem): Slot[] {
  const slots: Slot[] = [];
  for (const name of TRUNCATABLE_FIELDS) {
    const value = fieldValue(item, name);
    if (typeof value === "string") slots.push({ name, text: value, isString: true });
    else if (value !== undefined) {
      // Non-string values (a tool's input object) are cut as their serialization.
      const text = serialize(value);
      if (text !== undefined) slots.push({ name, text, isString: false });
    }
  }
  return slots;
}

const rawBytes = (slot: Slot) => (slot.rawBytes ??= Buffer.byteLength(slot.text));

// What the field adds to the item's serialization: quoted and escaped for a string, as is otherwise.
const serializedBytes = (slot: Slot) =>
  (slot.serializedBytes ??= slot.isString ? Buffer.byteLength(JSON.stringify(slot.text)) : rawBytes(slot));

/** A copy of `item` with `values` in place of the named fields, and the truncation markers when given. */
function rebuild(
  item: ThreadItem,
  values: ReadonlyMap<TruncatableField, string>,
  markers?: Markers,
): ThreadItem {
  const output = values.get("tool.output");
  const input = values.get("tool.input");
  const text = values.get("text");
  const first = values.get("content[0].text");
  let metadata = item.metadata;
  if (markers || output !== undefined || input !== undefined || text !== undefined) {
    const next: Record<string, unknown> = { ...item.metadata };
    if (output !== undefined || input !== undefined) {
      next.tool = {
        ...toolOf(item),
        ...(output === undefined ? {} : { output }),
        ...(input === undefined ? {} : { input }),
      };
    }
    if (text !== undefined) next.text = text;
    if (markers) {
      next.truncated = true;
      next.truncated_fields = [...markers.names];
      next.local_log = markers.localLogPath;
    }
    metadata = next as ThreadItemMetadata;
  }
  const content =
    first === undefined ? item.content : [{ ...item.content[0]!, text: first }, ...item.content.slice(1)];
  return { ...item, content, ...(metadata === undefined ? {} : { metadata }) };
}

/**
 * Serialized size of the candidate, without serializing big untouched fields again: each is
 * measured once and stood in for by "" (2 bytes). Infinity when an untouched field alone has more
 * UTF-16 units than the budget: every unit takes at least one byte, so the item is over for sure.
 */
function candidateSize(
  item: ThreadItem,
  slots: readonly Slot[],
  replaced: ReadonlyMap<TruncatableField, string>,
  markers: Markers | undefined,
  budget: number,
): number {
  const values = new Map(replaced);
  let untouchedBytes = 0;
  for (const slot of slots) {
    if (replaced.has(slot.name)) continue;
    if (slot.text.length > budget) return Number.POSITIVE_INFINITY;
    values.set(slot.name, "");
    untouchedBytes += serializedBytes(slot) - 2;
  }
  return measureThreadItem(rebuild(item, values, markers)) + untouchedBytes;
}

/** Head + marker + tail of the field, or undefined when cutting would not make it shorter. */
function truncated(slot: Slot, localLogPath: string): string | undefined {
  const total = rawBytes(slot);
  if (total <= TRUNCATION_HEAD_BYTES + TRUNCATION_TAIL_BYTES) return undefined;
  const head = utf8Head(slot.text, TRUNCATION_HEAD_BYTES);
  const tail = utf8Tail(slot.text, TRUNCATION_TAIL_BYTES);
  const removed = total - head.bytes - tail.bytes;
  const marker = truncationMarker(removed, localLogPath);
  if (removed <= Buffer.byteLength(marker)) return undefined;
  // join copies into a new flat string, so the result does not keep the whole original alive.
  return [head.text, marker, tail.text].join("");
}

/** Validates fitToBudget's options; throws INVALID_INPUT. */
export function checkFitOptions(options: FitToBudgetOptions): { budget: number; localLogPath: string } {
  if (typeof options !== "object" || options === null) {
    throw new StowageError(
      "INVALID_INPUT",
      `fitToBudget options must be an object with localLogPath, got ${describeValue(options)}`,
    );
  }
  const budget = options.budgetBytes ?? DEFAULT_BUDGET_BYTES;
  if (typeof budget !== "number" || !Number.isSafeInteger(budget) || budget < 1) {
    throw new StowageError(
      "INVALID_INPUT",
      `budgetBytes must be a positive integer, got ${describeValue(budget)}`,
    );
  }
  const path = options.localLogPath;
  if (
    typeof path !== "string" ||
    path === "" ||
    CONTROL_CHARACTER.test(path) ||
    Buffer.byteLength(path) > MAX_LOCAL_LOG_PATH_BYTES
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `localLogPath must be a non-empty string of at most ${MAX_LOCAL_LOG_PATH_BYTES} UTF-8 bytes without control characters, got ${describeValue(path)}`,
      { details: { limit: MAX_LOCAL_LOG_PATH_BYTES } },
    );
  }
  return { budget, localLogPath: path };
}

function tooLarge(sizeBytes: number, budgetBytes: number, stage: string): StowageError {
  return new StowageError(
    "TOO_LARGE",
    `thread item is ${sizeBytes} bytes serialized, over the budget of ${budgetBytes} bytes ${stage}`,
    { reason: THREAD_ITEM_TOO_LARGE, details: { sizeBytes, budgetBytes } },
  );
}

/**
 * Makes a thread item fit `budgetBytes` (UTF-8 bytes of its JSON). Returns the item itself when it
 * fits; otherwise a new item (the input is never mutated; unchanged parts are shared):
 * 1. `metadata.tool.output`, `metadata.tool.input`, `metadata.text`, `content[0].text`, in that
 *    order, each become head 4 KB + `…[truncated <N> bytes; see <localLogPath>]…` + tail 2 KB
 *    (cut on UTF-8 boundaries; `N` is the exact number of bytes removed; a non-string input is
 *    serialized first; a field that would not get shorter is left alone), with
 *    `metadata.truncated`, `metadata.truncated_fields` and `metadata.local_log` set. It stops as
 *    soon as the item fits.
 * 2. Still over: the same fields, in the same order, are replaced by the marker alone (`N` = all
 *    their bytes), until the item fits.
 * 3. Still over: throws TOO_LARGE with reason {@link THREAD_ITEM_TOO_LARGE}.
 */
export function fitToBudget(item: ThreadItem, options: FitToBudgetOptions): ThreadItem {
  const { budget, localLogPath } = checkFitOptions(options);
  parseThreadItem(item);
  const slots = slotsOf(item);

  // Whatever is cut, the rest of the item stays: when the rest alone is over, nothing can help.
  const floor = measureThreadItem(rebuild(item, new Map(slots.map((slot) => [slot.name, ""]))));
  if (floor > budget) {
    throw tooLarge(floor, budget, "even without its truncatable fields; nothing was cut");
  }

  const replaced = new Map<TruncatableField, string>();
  const previous = (item.metadata as Record<string, unknown> | undefined)?.truncated_fields;
  const names: TruncatableField[] = Array.isArray(previous) ? [...(previous as TruncatableField[])] : [];
  let markers: Markers | undefined;
  const sizeNow = () => candidateSize(item, slots, replaced, markers, budget);
  const replace = (slot: Slot, value: string) => {
    replaced.set(slot.name, value);
    if (!names.includes(slot.name)) names.push(slot.name);
    markers = { names, localLogPath };
  };

  if (sizeNow() <= budget) return item;
  for (const slot of slots) {
    const value = truncated(slot, localLogPath);
    if (value === undefined) continue;
    replace(slot, value);
    if (sizeNow() <= budget) return rebuild(item, replaced, markers);
  }
  for (const slot of slots) {
    const marker = truncationMarker(rawBytes(slot), localLogPath);
    const current = replaced.get(slot.name);
    const currentBytes = current === undefined ? rawBytes(slot) : Buffer.byteLength(current);
    if (Buffer.byteLength(marker) >= currentBytes) continue;
    replace(slot, marker);
    if (sizeNow() <= budget) return rebuild(item, replaced, markers);
  }
  const finalSize = measureThreadItem(rebuild(item, replaced, markers));
  throw tooLarge(finalSize, budget, `after truncating and dropping ${names.join(", ") || "no field"}`);
}
