import { describeValue, StowageError } from "@stowage/core";
import { isWellFormedText } from "../text/utf8.js";

/** Deepest nesting `canonicalJson` accepts; deeper input is refused rather than overflowing the stack. */
export const MAX_JSON_DEPTH = 256;

function fail(path: string, problem: string): never {
  throw new StowageError("INVALID_INPUT", `JSON value at ${path} ${problem}`, { details: { path } });
}

function quote(text: string, path: string): string {
  if (!isWellFormedText(text)) fail(path, "holds a lone surrogate, which has no UTF-8 encoding");
  return JSON.stringify(text);
}

function write(value: unknown, path: string, depth: number, ancestors: Set<object>): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return quote(value, path);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) fail(path, `is ${value}, which JSON cannot represent`);
      return JSON.stringify(value);
    case "object":
      break;
    default:
      fail(path, `is ${describeValue(value)} (${typeof value}), which is not JSON`);
  }
  const object = value as object;
  if (depth >= MAX_JSON_DEPTH) fail(path, `is nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (ancestors.has(object)) fail(path, "is circular (it contains itself)");
  ancestors.add(object);
  let text: string;
  if (Array.isArray(object)) {
    const items: string[] = [];
    for (let index = 0; index < object.length; index++) {
      const item: unknown = object[index];
      if (item === undefined)
        fail(`${path}[${index}]`, "is undefined (or a hole), which JSON has no value for");
      items.push(write(item, `${path}[${index}]`, depth + 1, ancestors));
    }
    text = `[${items.join(",")}]`;
  } else {
    const prototype = Object.getPrototypeOf(object);
    if (prototype !== Object.prototype && prototype !== null) {
      fail(
        path,
        `is a ${object.constructor?.name ?? "non-plain object"}, not a plain object; convert it first`,
      );
    }
    const members: string[] = [];
    // JCS (RFC 8785) order: keys sorted by UTF-16 code units, which is what `sort()` does.
    for (const key of Object.keys(object).sort()) {
      const member = (object as Record<string, unknown>)[key];
      if (member === undefined) continue; // as JSON.stringify: an undefined property is absent
      const memberPath = `${path}.${key}`;
      members.push(`${quote(key, memberPath)}:${write(member, memberPath, depth + 1, ancestors)}`);
    }
    text = `{${members.join(",")}}`;
  }
  ancestors.delete(object);
  return text;
}

/**
 * Canonical JSON of a plain JSON value: keys sorted, no whitespace, numbers as JavaScript prints
 * them (the RFC 8785 scheme), so that equal values give equal text and so equal content ids.
 * INVALID_INPUT, naming the path (`details.path`, e.g. `$.a[0].b`), for anything JSON cannot carry
 * faithfully: undefined in an array, NaN and infinities, functions, symbols, bigints, class
 * instances (Date, Map…), cycles, lone surrogates, nesting deeper than {@link MAX_JSON_DEPTH}.
 */
export function canonicalJson(value: unknown): string {
  return write(value, "$", 0, new Set());
}
