import { createHmac, timingSafeEqual } from "node:crypto";
import { StowageError } from "@stowage/core";

/** Shortest signing secret accepted, in bytes: an HMAC-SHA256 key should carry 256 bits. */
export const MIN_SIGNING_SECRET_BYTES = 32;

/** What a signed URL binds. Changing any field invalidates the signature. */
export interface SignedFields {
  method: "PUT" | "GET";
  key: string;
  /** Unix time in seconds after which the URL is refused. */
  expires: number;
  /** Uploads only: exact size, content type, and optional hex SHA-256. */
  length?: number;
  type?: string;
  sha256?: string;
  /** Downloads only: how the browser treats the file and the name it is saved under. */
  disposition?: "inline" | "attachment";
  filename?: string;
}

// Newline-separated and versioned, so that no value can shift into another field's position
// (keys, types, hashes and file names cannot contain a newline: they are validated first).
// v2 added the download's disposition and file name.
function canonical(fields: SignedFields): string {
  return [
    "stowage-fs-v2",
    fields.method,
    fields.key,
    String(fields.expires),
    fields.length === undefined ? "" : String(fields.length),
    fields.type ?? "",
    fields.sha256 ?? "",
    fields.disposition ?? "",
    fields.filename ?? "",
  ].join("\n");
}

export function sign(secret: Uint8Array, fields: SignedFields): string {
  return createHmac("sha256", secret).update(canonical(fields)).digest("base64url");
}

/** Constant-time comparison of a presented signature with the expected one. */
export function signatureMatches(secret: Uint8Array, fields: SignedFields, presented: string): boolean {
  const expected = Buffer.from(sign(secret, fields));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A refusal of a request that differs from what its URL signed; `reason` says how. */
export const forbidden = (message: string, reason: string) =>
  new StowageError("FORBIDDEN", message, { reason });
