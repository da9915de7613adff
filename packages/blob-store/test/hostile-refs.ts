import { BLOB_REF_PREFIX } from "../src/blob-ref.js";

const hash = "0123456789abcdef".repeat(4);

/** Strings that look like refs but are not; none may ever be turned into a key or path. */
export const HOSTILE_REFS: readonly [string, unknown][] = [
  ["uppercase hex", `blob:sha256:${hash.toUpperCase()}`],
  ["63 hex", `blob:sha256:${hash.slice(1)}`],
  ["65 hex", `blob:sha256:${hash}0`],
  ["traversal", `blob:sha256:../../../../etc/passwd${"a".repeat(30)}`],
  ["slash inside", `blob:sha256:${hash.slice(0, 32)}/${hash.slice(33)}`],
  ["other algorithm", `blob:sha1:${hash}`],
  ["prefix only", BLOB_REF_PREFIX],
  ["leading space", ` blob:sha256:${hash}`],
  ["trailing newline", `blob:sha256:${hash}\n`],
  ["NUL inside", `blob:sha256:${hash.slice(0, 10)}\u0000${hash.slice(11)}`],
  ["upper-case scheme", `BLOB:SHA256:${hash}`],
  ["data URL", `data:image/png;base64,blob:sha256:${hash}`],
  ["number", 42],
  ["null", null],
];
