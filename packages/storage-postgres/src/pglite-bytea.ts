import { describeValue, StowageError } from "@stowage/core";

// PGlite's own bytea codecs go byte by byte in JavaScript (`Array.from(bytes).map(…)` to write,
// a `parseInt` a byte pair to read): on 2026-12-02 a 1 MiB value took 640 ms to insert and 108 ms
// to read back, and a SessionStore append of 100 entries (their lines travel as one bytea
// parameter) spent 70 ms of its CPU there. Node's hex codec writes and reads the same text: 43
// and 15 ms for that 1 MiB. Bytes stay in PostgreSQL's hex text form, the form PGlite's parsers
// already assume (`bytea_output` is `hex`, PostgreSQL's default).

/** PostgreSQL's type OID of bytea. */
const BYTEA_OID = 17;
/** The prefix of bytea's hex text form. */
const HEX_PREFIX = "\\x";

function toByteaText(value: unknown): string {
  if (!(value instanceof Uint8Array))
    throw new StowageError(
      "INTERNAL",
      `a bytea parameter must be a Uint8Array, got ${describeValue(value)}`,
      {
        reason: "NOT_BYTES",
      },
    );
  return HEX_PREFIX + Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex");
}

/** The bytes of bytea's hex text, in a Uint8Array of their own (not a view of Node's shared pool). */
function fromByteaText(text: string): Uint8Array {
  const hex = text.slice(HEX_PREFIX.length);
  const bytes = new Uint8Array(hex.length >>> 1);
  const written = Buffer.from(bytes.buffer).write(hex, "hex");
  if (!text.startsWith(HEX_PREFIX) || hex.length % 2 !== 0 || written !== bytes.byteLength) {
    throw new StowageError(
      "INTEGRITY",
      `the embedded database returned a bytea value that is not hex text (${describeValue(text.slice(0, 16))}…; bytea_output must be hex)`,
      { reason: "BYTEA_NOT_HEX" },
    );
  }
  return bytes;
}

/** The `serializers` and `parsers` options a PGlite is made with: bytea through Node's hex codec. */
export const PGLITE_BYTEA_CODECS = {
  serializers: { [BYTEA_OID]: toByteaText },
  parsers: { [BYTEA_OID]: fromByteaText },
};
