import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import { nextTurn, StowageError } from "@stowage/core";

/** A string longer than this is serialized a slice at a time (about 10 ms of work each). */
const SLICE_CHARS = 1024 * 1024;

/**
 * `value`'s JSON as UTF-8 bytes, exactly `JSON.stringify(value)`'s, made without holding the event
 * loop for long: a thread item may hold a string of 30 MB once its secrets are redacted, whose
 * serialization took 60–100 ms in one call. Strings over {@link SLICE_CHARS} stand in the first
 * pass as unique tokens; each is then escaped a slice at a time (escaping is per character, and a
 * slice never ends between the two halves of a surrogate pair), with a turn of the loop between.
 */
export async function jsonBytes(value: unknown): Promise<Uint8Array> {
  const nonce = randomBytes(16).toString("hex");
  const long: string[] = [];
  let json: string;
  try {
    json = JSON.stringify(value, (_key, field: unknown) => {
      if (typeof field !== "string" || field.length <= SLICE_CHARS) return field;
      long.push(field);
      return `${nonce}:${long.length - 1}`;
    });
  } catch (err) {
    throw new StowageError(
      "INVALID_INPUT",
      `thread item must be JSON-serializable: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  if (long.length === 0) return Buffer.from(json);
  const parts: Buffer[] = [];
  const token = new RegExp(`"${nonce}:(\\d+)"`, "g");
  let from = 0;
  for (const match of json.matchAll(token)) {
    parts.push(Buffer.from(json.slice(from, match.index)));
    const text = long[Number(match[1])]!;
    parts.push(Buffer.from('"'));
    for (let at = 0; at < text.length; ) {
      let end = Math.min(at + SLICE_CHARS, text.length);
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
      parts.push(Buffer.from(JSON.stringify(text.slice(at, end)).slice(1, -1)));
      at = end;
      await nextTurn();
    }
    parts.push(Buffer.from('"'));
    from = match.index + match[0].length;
  }
  parts.push(Buffer.from(json.slice(from)));
  return Buffer.concat(parts);
}
