import { runToEnd, type Steps } from "@stowage/core";
import { SECRET_SHAPES, type SecretSpan } from "./secret-patterns.js";
import { windowEnd } from "./text-windows.js";

/** Where a secret was taken out of an item: its kind, the string's path and where its placeholder starts. */
interface Redaction {
  kind: string;
  /** The string's path in the item, e.g. `metadata.tool.output` or `content.0.text`. */
  path: string;
  /** Offset of the placeholder in that string, in UTF-16 code units. */
  index: number;
}

/**
 * The most redactions an item lists. A log of a thousand tokens is redacted whole, but a list of
 * every place would outgrow the item's budget and fail the thread; past this many the item says
 * how many more there were (`redactions_omitted`).
 */
const MAX_LISTED_REDACTIONS = 256;

/**
 * Work (characters read, and {@link WORK_PER_SECRET} per secret found) between two pauses of a
 * redaction run in steps: about 10 ms.
 */
const WORK_PER_STEP = 256 * 1024;
const WORK_PER_SECRET = 64;

/** What a secret is replaced with: its kind, never a part of it. */
const redactedPlaceholder = (kind: string) => `[REDACTED:${kind}]`;

interface Found extends SecretSpan {
  kind: string;
}

/**
 * Every secret in `text`, in order, none overlapping (the earlier start wins, then the longer).
 * A long text is read window by window (see `windowEnd`), each shape over one window at a time,
 * with a pause once {@link WORK_PER_STEP} was done since the last.
 */
function* findSecrets(text: string, out: Redacted): Steps<Found[]> {
  const kept: Found[] = [];
  let keptEnd = 0;
  for (let start = 0; start < text.length; ) {
    const end = windowEnd(text, start);
    const window = start === 0 && end === text.length ? text : text.slice(start, end);
    const found: Found[] = [];
    for (const { kind, find } of SECRET_SHAPES) {
      let count = 0;
      for (const span of find(window)) {
        found.push({ start: start + span.start, end: start + span.end, kind });
        count++;
      }
      out.work += window.length + count * WORK_PER_SECRET;
      if (out.work >= WORK_PER_STEP) {
        out.work = 0;
        yield;
      }
    }
    found.sort((a, b) => a.start - b.start || b.end - a.end);
    for (const secret of found) {
      if (secret.start < keptEnd) continue;
      kept.push(secret);
      keptEnd = secret.end;
    }
    start = end;
  }
  return kept;
}

interface Redacted {
  redactions: Redaction[];
  /** Redactions made past {@link MAX_LISTED_REDACTIONS}. */
  omitted: number;
  /** Work done since the last pause (see {@link WORK_PER_STEP}). */
  work: number;
}

function* redactText(text: string, path: string, out: Redacted): Steps<string> {
  const secrets = yield* findSecrets(text, out);
  if (secrets.length === 0) return text;
  // Joined a piece at a time: one join of a million parts held the event loop for 100 ms.
  const pieces: string[] = [];
  let parts: string[] = [];
  let length = 0;
  let from = 0;
  for (const { start, end, kind } of secrets) {
    const before = text.slice(from, start);
    const placeholder = redactedPlaceholder(kind);
    parts.push(before, placeholder);
    length += before.length;
    if (out.redactions.length < MAX_LISTED_REDACTIONS) out.redactions.push({ kind, path, index: length });
    else out.omitted++;
    length += placeholder.length;
    from = end;
    out.work += WORK_PER_SECRET;
    if (out.work >= WORK_PER_STEP) {
      pieces.push(parts.join(""));
      parts = [];
      out.work = 0;
      yield;
    }
  }
  parts.push(text.slice(from));
  pieces.push(parts.join(""));
  return pieces.join("");
}

function* walk(value: unknown, path: string, out: Redacted): Steps<unknown> {
  if (typeof value === "string") return yield* redactText(value, path, out);
  if (typeof value !== "object" || value === null) return value;
  const at = (key: string) => (path === "" ? key : `${path}.${key}`);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const clean = yield* walk(value[index], at(String(index)), out);
      if (clean === value[index]) continue;
      copy ??= [...value];
      copy[index] = clean;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, element] of Object.entries(value)) {
    const clean = yield* walk(element, at(key), out);
    if (clean !== element) copy = { ...(copy ?? value), [key]: clean };
  }
  return copy ?? value;
}

/** What {@link redactSecrets} gives: the value redacted, the redactions it lists and how many it left out. */
export interface RedactedValue<T> {
  value: T;
  redactions: Redaction[];
  omitted: number;
}

/**
 * `value` (a JSON value: a thread item) with every secret of a known shape in its strings
 * replaced by `[REDACTED:<kind>]`, and where each was; `value` itself when there was none.
 * Object keys are left as they are: a secret is a value. As steps, pausing after each shape's
 * pass over a string, so that a large item is redacted in slices (core's `runInSlices`).
 */
export function* redactSecretsSteps<T>(value: T): Steps<RedactedValue<T>> {
  const out: Redacted = { redactions: [], omitted: 0, work: 0 };
  const redacted = (yield* walk(value, "", out)) as T;
  return { value: redacted, redactions: out.redactions, omitted: out.omitted };
}

/** {@link redactSecretsSteps} run to its end at once. */
export function redactSecrets<T>(value: T): RedactedValue<T> {
  return runToEnd(redactSecretsSteps(value));
}
