import { BLOB_REF_PREFIX } from "../content-store.js";
import { MAX_KEY_BYTES, MAX_SEGMENT_BYTES } from "../keys.js";

export interface HostileInput {
  value: unknown;
  /** What makes it hostile, shown in the test name. */
  why: string;
}

/** Keys every store must reject with INVALID_INPUT before touching its backend. */
export const HOSTILE_KEYS: readonly HostileInput[] = [
  { value: "", why: "empty" },
  { value: "..", why: "parent directory" },
  { value: ".", why: "current directory" },
  { value: "../escape", why: "leading traversal" },
  { value: "a/../../escape", why: "traversal in the middle" },
  { value: "a/..", why: "trailing traversal" },
  { value: "a/./b", why: "dot segment" },
  { value: "/etc/passwd", why: "absolute path" },
  { value: "//server/share", why: "UNC-like path" },
  { value: "a//b", why: "empty segment" },
  { value: "a/", why: "trailing slash" },
  { value: "..\\escape", why: "backslash traversal" },
  { value: "a\\b", why: "backslash" },
  { value: "C:\\Windows", why: "Windows drive path" },
  { value: "a\u0000b", why: "NUL byte" },
  { value: "a\nb", why: "newline" },
  { value: "a\rb", why: "carriage return" },
  { value: "a\u001bb", why: "escape character" },
  { value: "a\u007f", why: "DEL" },
  { value: "bad\ud800", why: "lone surrogate" },
  { value: "x".repeat(MAX_KEY_BYTES + 1), why: "key too long" },
  { value: "é".repeat(MAX_KEY_BYTES / 2 + 1), why: "key too long in UTF-8 bytes" },
  { value: `a/${"s".repeat(MAX_SEGMENT_BYTES + 1)}`, why: "segment too long" },
  { value: 42, why: "a number" },
  { value: null, why: "null" },
  { value: undefined, why: "undefined" },
  { value: ["a"], why: "an array" },
  { value: { toString: () => "a" }, why: "an object with toString" },
];

/** Keys that look odd but are safe and must round-trip unchanged. */
export const UNUSUAL_SAFE_KEYS: readonly string[] = [
  "with space.txt",
  "ünïcødé/ключ/鍵",
  "emoji-😀.png",
  "%2e%2e",
  "...",
  ".hidden",
  "a.b.c",
  "colon:key",
  "~tilde",
  "s".repeat(MAX_SEGMENT_BYTES),
];

/** Listing prefixes every store must reject with INVALID_INPUT. */
export const HOSTILE_PREFIXES: readonly HostileInput[] = [
  { value: "../", why: "leading traversal" },
  { value: "..", why: "parent directory" },
  { value: "a/../", why: "traversal in the middle" },
  { value: "a/..", why: "trailing traversal" },
  { value: "/abs", why: "absolute path" },
  { value: "a//", why: "empty segment" },
  { value: "a\\b", why: "backslash" },
  { value: "a\u0000", why: "NUL byte" },
  { value: 7, why: "a number" },
];

const SAMPLE_HASH = "0123456789abcdef".repeat(4);

/** Strings that look like blob refs but are not; none may ever be turned into a key or path. */
export const HOSTILE_REFS: readonly [string, unknown][] = [
  ["uppercase hex", `blob:sha256:${SAMPLE_HASH.toUpperCase()}`],
  ["63 hex", `blob:sha256:${SAMPLE_HASH.slice(1)}`],
  ["65 hex", `blob:sha256:${SAMPLE_HASH}0`],
  ["traversal", `blob:sha256:../../../../etc/passwd${"a".repeat(30)}`],
  ["slash inside", `blob:sha256:${SAMPLE_HASH.slice(0, 32)}/${SAMPLE_HASH.slice(33)}`],
  ["other algorithm", `blob:sha1:${SAMPLE_HASH}`],
  ["prefix only", BLOB_REF_PREFIX],
  ["leading space", ` blob:sha256:${SAMPLE_HASH}`],
  ["trailing newline", `blob:sha256:${SAMPLE_HASH}\n`],
  ["NUL inside", `blob:sha256:${SAMPLE_HASH.slice(0, 10)}\u0000${SAMPLE_HASH.slice(11)}`],
  ["upper-case scheme", `BLOB:SHA256:${SAMPLE_HASH}`],
  ["data URL", `data:image/png;base64,blob:sha256:${SAMPLE_HASH}`],
  ["number", 42],
  ["null", null],
];
