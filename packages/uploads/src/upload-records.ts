import { randomBytes } from "node:crypto";
import { isSha256Hex } from "@stowage/core";

// Where a store does not check an upload's bytes against the SHA-256 its URL binds (Ceph RGW 16),
// the service keeps, for each signed URL, a small JSON record of what the URL bound, beside the
// upload (`upload-records/<filename>/`). An upload with records counts only once its object
// matches one of them. Records are Stowage's own format, never read by clients.

/** What one signed upload URL bound. */
export interface GrantRecord {
  size: number;
  /** Hex SHA-256 the URL bound; null when the request gave none (any bytes of `size` match). */
  sha256: string | null;
  /** The content type the URL bound, normalized as the policy check left it. */
  contentType: string;
  /** When the URL expires, in ms since the epoch. */
  expiresAt: number;
}

/** The object an upload's records were last checked against, so that a listing need not hash it again. */
export interface VerifiedStamp {
  size: number;
  /** The object's lastModified, in ms since the epoch. */
  lastModified: number;
}

/** The name of the stamp in an upload's records folder; grant records are `<expiresAt>-<random>.json`. */
export const VERIFIED_STAMP_NAME = "verified.json";

/**
 * Names of the verified copies a download is served from while an upload URL can still write
 * the upload: `served-<lastModified>-<size>`, one per verified state of the object. No URL can
 * write them; they go with the records once every URL has expired.
 */
export const SERVED_COPY_PREFIX = "served-";

/** The verified copy's name for an object of this size and lastModified. */
export function servedCopyName(object: { size: number; lastModified: Date }): string {
  return `${SERVED_COPY_PREFIX}${object.lastModified.getTime()}-${object.size}`;
}

const GRANT_NAME = /^(\d{1,16})-[0-9a-f]{16}\.json$/;

/** A new grant record's name: its URL's expiry first, so a sweep can tell an expired one by name. */
export function grantRecordName(expiresAt: number): string {
  return `${expiresAt}-${randomBytes(8).toString("hex")}.json`;
}

/** The expiry a grant record's name carries, or undefined for any other name. */
export function grantRecordExpiry(name: string): number | undefined {
  const match = GRANT_NAME.exec(name);
  return match ? Number(match[1]) : undefined;
}

/** A record as stored: UTF-8 JSON. */
export function encodeRecord(record: GrantRecord | VerifiedStamp): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(record));
}

/** A JSON object of Stowage's own records, or undefined when it is missing or not one. */
export function parseJson(bytes: Uint8Array | null): Record<string, unknown> | undefined {
  if (bytes === null) return undefined;
  try {
    const value: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const isSize = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** A stored grant record, or undefined when it is missing or malformed (it then vouches for nothing). */
export function decodeGrantRecord(bytes: Uint8Array | null): GrantRecord | undefined {
  const value = parseJson(bytes);
  if (!value) return undefined;
  const { size, sha256, contentType, expiresAt } = value;
  if (!isSize(size) || !isSize(expiresAt) || typeof contentType !== "string") return undefined;
  if (sha256 !== null && !isSha256Hex(sha256)) return undefined;
  return { size, sha256, contentType, expiresAt };
}

/** A stored stamp, or undefined when it is missing or malformed. */
export function decodeVerifiedStamp(bytes: Uint8Array | null): VerifiedStamp | undefined {
  const value = parseJson(bytes);
  if (!value || !isSize(value.size) || !isSize(value.lastModified)) return undefined;
  return { size: value.size, lastModified: value.lastModified };
}
