const MAX_SHOWN_CHARS = 80;

/**
 * Quote a bad input for an error message: JSON-escaped (so control characters and NUL are
 * visible, never echoed raw into a terminal or log) and cut to a readable length.
 */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    const shown = value.length > MAX_SHOWN_CHARS ? `${value.slice(0, MAX_SHOWN_CHARS)}…` : value;
    return JSON.stringify(shown);
  }
  if (value === undefined) return "undefined";
  // JSON has no NaN or Infinity: it would print them as "null", which hides what was wrong.
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "function") return "a function";
  if (value instanceof Uint8Array) return `${value.constructor.name}(${value.byteLength} bytes)`;
  try {
    const json = JSON.stringify(value);
    if (json === undefined) return String(value);
    return json.length > MAX_SHOWN_CHARS ? `${json.slice(0, MAX_SHOWN_CHARS)}…` : json;
  } catch {
    return Object.prototype.toString.call(value);
  }
}
