import { createHash } from "node:crypto";

const valid = createHash("sha256").update("x").digest("hex");

/** Values that must never be accepted as a content id. */
export const HOSTILE_CONTENT_IDS: readonly { value: unknown; why: string }[] = [
  { value: "", why: "empty" },
  { value: "../x", why: "traversal" },
  { value: `../${valid.slice(3)}`, why: "traversal of id length" },
  { value: `${valid.slice(0, 2)}/${valid}`, why: "a key, not an id" },
  { value: "%2e%2e", why: "percent-encoded traversal" },
  { value: `%2e%2e%2f${valid.slice(9)}`, why: "percent-encoded traversal of id length" },
  { value: `/${valid.slice(1)}`, why: "absolute path" },
  { value: `${valid.slice(0, 63)}\u0000`, why: "NUL byte" },
  { value: valid.toUpperCase(), why: "uppercase hex" },
  { value: valid.slice(0, 63), why: "63 characters" },
  { value: `${valid}0`, why: "65 characters" },
  { value: `${valid.slice(0, 63)}g`, why: "not hex" },
  { value: ` ${valid.slice(1)}`, why: "leading space" },
  { value: `${valid}\n`, why: "trailing newline" },
  { value: `sha256:${valid}`, why: "prefixed" },
  { value: "a".repeat(100_000), why: "oversized" },
  { value: `${valid.slice(0, 63)}\ud800`, why: "lone surrogate" },
  { value: 42, why: "a number" },
  { value: null, why: "null" },
  { value: undefined, why: "undefined" },
  { value: { toString: () => valid }, why: "an object posing as the id" },
];
