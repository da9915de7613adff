import { describeValue, StowageError } from "@stowage/core";
import { parseIdNumber } from "../layout/names.js";

/** Longest `?q=` query accepted, in characters. */
export const MAX_QUERY_LENGTH = 4096;
/** Most steps in one JSON path (`/a/b/0`) or query (`.a.b[0]`). */
export const MAX_JSON_PATH_STEPS = 256;

/**
 * One step into a JSON value. `key` and `index` come from a query and demand an object or an
 * array; `segment` comes from a URL path and is an index when the value there is an array.
 */
export type JsonStep =
  | { kind: "key"; key: string }
  | { kind: "index"; index: number }
  | { kind: "segment"; text: string };

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/y;
const INDEX = /(0|[1-9][0-9]*)\]/y;

function badQuery(query: string, problem: string, details?: Record<string, unknown>): StowageError {
  return new StowageError(
    "INVALID_INPUT",
    `agent:// query ${problem}; accepted: . followed by .key, [n] and ["quoted key"] steps (e.g. .a.b[0]), got: ${describeValue(query)}`,
    { reason: "INVALID_QUERY", ...(details ? { details } : {}) },
  );
}

function tooManySteps(what: string): StowageError {
  return new StowageError("INVALID_INPUT", `agent:// ${what} has more than ${MAX_JSON_PATH_STEPS} steps`, {
    reason: "INVALID_QUERY",
    details: { limit: MAX_JSON_PATH_STEPS },
  });
}

/**
 * Parses a jq-like query: `.` (the whole value), `.key`, `[n]`, `["quoted key"]` (a JSON string,
 * escapes included), chained as in `.a["b c"][0].d`; `.[n]` and `.["k"]` are accepted too.
 */
export function parseJsonQuery(query: string): JsonStep[] {
  if (query.length === 0) throw badQuery(query, "is empty");
  if (query.length > MAX_QUERY_LENGTH) {
    throw badQuery(query, `is longer than ${MAX_QUERY_LENGTH} characters`, { limit: MAX_QUERY_LENGTH });
  }
  if (query[0] !== ".") throw badQuery(query, "must start with .");
  if (query === ".") return [];
  const steps: JsonStep[] = [];
  let i = 0;
  while (i < query.length) {
    if (steps.length >= MAX_JSON_PATH_STEPS) throw tooManySteps("query");
    const char = query[i];
    if (char === ".") {
      i++;
      if (query[i] === "[") continue;
      IDENTIFIER.lastIndex = i;
      const match = IDENTIFIER.exec(query);
      if (!match) {
        throw badQuery(
          query,
          `needs a key after the . at position ${i - 1} (use ["…"] for other characters)`,
        );
      }
      steps.push({ kind: "key", key: match[0] });
      i += match[0].length;
    } else if (char === "[") {
      if (query[i + 1] === '"') {
        let end = i + 2;
        while (end < query.length && query[end] !== '"') end += query[end] === "\\" ? 2 : 1;
        if (end >= query.length) throw badQuery(query, `has an unterminated string at position ${i + 1}`);
        let key: unknown;
        try {
          key = JSON.parse(query.slice(i + 1, end + 1));
        } catch {
          throw badQuery(query, `has an invalid JSON string at position ${i + 1}`);
        }
        if (query[end + 1] !== "]") throw badQuery(query, `needs ] at position ${end + 1}`);
        steps.push({ kind: "key", key: key as string });
        i = end + 2;
      } else {
        INDEX.lastIndex = i + 1;
        const match = INDEX.exec(query);
        const index = match ? parseIdNumber(match[1]) : undefined;
        if (!match || index === undefined) {
          throw badQuery(query, `needs a non-negative integer index or a "quoted key" at position ${i + 1}`);
        }
        steps.push({ kind: "index", index });
        i += match[0].length + 1;
      }
    } else {
      throw badQuery(query, `has an unexpected ${describeValue(char)} at position ${i}`);
    }
  }
  return steps;
}

/** Path segments (already percent-decoded) as steps. */
export function pathSteps(segments: readonly string[]): JsonStep[] {
  if (segments.length > MAX_JSON_PATH_STEPS) throw tooManySteps("path");
  return segments.map((text) => ({ kind: "segment", text }));
}

/** Renders steps for messages: `.a[0]["b c"]`, or `/a/0` for path segments. */
export function formatSteps(steps: readonly JsonStep[]): string {
  if (steps.length === 0) return ".";
  return steps
    .map((step) => {
      if (step.kind === "segment") return `/${step.text}`;
      if (step.kind === "index") return `[${step.index}]`;
      return /^[A-Za-z_][A-Za-z0-9_]*$/.test(step.key) ? `.${step.key}` : `[${JSON.stringify(step.key)}]`;
    })
    .join("");
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

export type Extraction = { found: true; value: unknown } | { found: false; stoppedAt: string; why: string };

/**
 * Walks `steps` into `root`. Only own properties count (`constructor` or `__proto__` of a plain
 * object are missing, not inherited). A missing step is reported as such, never as `null`: a
 * JSON `null` that is present is found.
 */
export function extractJson(root: unknown, steps: readonly JsonStep[]): Extraction {
  let current = root;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    const here = formatSteps(steps.slice(0, i));
    const miss = (why: string): Extraction => ({ found: false, stoppedAt: here, why });
    if (Array.isArray(current)) {
      if (step.kind === "key")
        return miss(`${here} is an array, which has no key ${describeValue(step.key)}`);
      const index = step.kind === "index" ? step.index : parseIdNumber(step.text);
      if (index === undefined)
        return miss(
          `${here} is an array; ${describeValue(step.kind === "segment" ? step.text : "")} is not an index`,
        );
      if (index >= current.length) {
        return miss(
          `${here} has ${current.length} item${current.length === 1 ? "" : "s"}, no index ${index}`,
        );
      }
      current = current[index];
    } else if (typeof current === "object" && current !== null) {
      if (step.kind === "index") return miss(`${here} is an object, which has no index ${step.index}`);
      const key = step.kind === "key" ? step.key : step.text;
      if (!Object.hasOwn(current, key)) return miss(`${here} has no key ${describeValue(key)}`);
      current = (current as Record<string, unknown>)[key];
    } else {
      return miss(`${here} is ${kindOf(current)}, not an object or array`);
    }
  }
  return { found: true, value: current };
}
