import { describeValue, StowageError, sanitizeText } from "@stowage/core";

function notSerializable(why: string, cause?: unknown): StowageError {
  return new StowageError("INVALID_INPUT", `thread item must be JSON-serializable: ${why}`, { cause });
}

/**
 * `value` with every string in it, object keys included, passed through core's `sanitizeText`
 * (escape sequences, control characters but `\n` and `\t`, invisible characters that hide or
 * reorder text, lone surrogates). Walks what `JSON.stringify` would write (a `toJSON` result
 * in place of its object); returns `value` itself when nothing changed, else a copy, never
 * touching the input. Throws INVALID_INPUT for a cycle or nesting too deep to serialize.
 */
export function sanitizeJsonStrings<T>(value: T): T {
  try {
    return walk(value, "", []) as T;
  } catch (err) {
    if (err instanceof RangeError) throw notSerializable(`nested too deeply (${err.message})`, err);
    if (StowageError.is(err)) throw err;
    throw notSerializable(`reading it threw ${describeValue(err)}`, err);
  }
}

// At module level, not a closure inside sanitizeJsonStrings: every item built calls it, and a
// closure made per call was a measurable share of converting a transcript. The objects being
// walked are a stack, searched like JSON.stringify searches its own: a tool's input is a few
// levels deep, and a Set made, grown and shrunk per input was most of this walk's garbage.
function walk(current: unknown, key: string, ancestors: object[]): unknown {
  if (typeof current === "string") return sanitizeText(current);
  if (typeof current !== "object" || current === null) return current;
  const { toJSON } = current as { toJSON?: unknown };
  if (typeof toJSON === "function") return walk(toJSON.call(current, key), key, ancestors);
  if (ancestors.includes(current)) throw notSerializable(`it holds a cycle (at ${JSON.stringify(key)})`);
  ancestors.push(current);
  try {
    if (Array.isArray(current)) {
      let copy: unknown[] | undefined;
      for (let index = 0; index < current.length; index++) {
        const clean = walk(current[index], String(index), ancestors);
        if (clean === current[index]) continue;
        copy ??= current.slice();
        copy[index] = clean;
      }
      return copy ?? current;
    }
    const record = current as Record<string, unknown>;
    const keys = Object.keys(record);
    // Entries are built only once something changed: most records are clean, and a pair per
    // property of every record was most of this walk's garbage.
    let entries: [string, unknown][] | undefined;
    for (let index = 0; index < keys.length; index++) {
      const name = keys[index]!;
      const cleanName = sanitizeText(name);
      const clean = walk(record[name], name, ancestors);
      if (entries === undefined && cleanName === name && clean === record[name]) continue;
      entries ??= keys.slice(0, index).map((kept) => [kept, record[kept]]);
      entries.push([cleanName, clean]);
    }
    return entries ? Object.fromEntries(entries) : current;
  } finally {
    ancestors.pop();
  }
}
