import { describeValue, type Env, envPositiveNumber, parseContentType, StowageError } from "@stowage/core";
import { formatSize } from "./format-size.js";
import {
  assertUploadFilename,
  filenameExtension,
  MAX_UPLOAD_FILENAME_BYTES,
  uploadFilenameProblem,
} from "./upload-filename.js";

/** One mebibyte, the unit of the size settings: 1,048,576 bytes. */
const MIB = 1024 * 1024;
const DEFAULT_MAX_FILE_SIZE_MIB = 50;
const DEFAULT_MAX_TOTAL_SIZE_MIB = 500;

/**
 * Extensions accepted by default and the MIME types each accepts; an upload's extension and
 * content type must both appear here and agree. The first type is what an uploader sends.
 */
export const DEFAULT_UPLOAD_TYPES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  png: ["image/png"],
  jpg: ["image/jpeg"],
  jpeg: ["image/jpeg"],
  gif: ["image/gif"],
  webp: ["image/webp"],
  mp4: ["video/mp4"],
  mov: ["video/quicktime"],
  avi: ["video/x-msvideo", "video/avi", "video/msvideo"],
  webm: ["video/webm"],
  log: ["text/plain"],
  txt: ["text/plain"],
  json: ["application/json"],
  xml: ["application/xml", "text/xml"],
  csv: ["text/csv"],
  html: ["text/html"],
});

/** What may be uploaded: a validated, frozen policy from {@link createUploadPolicy}. */
export interface UploadPolicy {
  /** Extension (lowercase, no dot) → accepted MIME types (lowercase, no parameters). */
  readonly allowedTypes: Readonly<Record<string, readonly string[]>>;
  readonly maxFileSizeBytes: number;
  /** Per session: uploads and everything else under the session's prefix count. */
  readonly maxTotalSizeBytes: number;
  readonly maxFilenameBytes: number;
}

/** Any of the policy's fields; the rest keep their defaults. */
export type UploadPolicyOptions = Partial<UploadPolicy>;

const EXTENSION_PATTERN = /^[a-z0-9]{1,16}$/;
// Only a charset may qualify an upload's type, and only a plain one: the type becomes a signed
// header of the upload URL and the stored object's Content-Type.
const CHARSET_VALUE = /^[a-z0-9._-]{1,40}$/;

function invalidPolicy(what: string, value: unknown, accepted: string): StowageError {
  return new StowageError(
    "INVALID_INPUT",
    `upload policy: ${what} must be ${accepted}, got ${describeValue(value)}`,
  );
}

function positiveBytes(what: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw invalidPolicy(what, value, "a positive integer number of bytes");
  }
  return value;
}

/** True when `type` is a bare MIME type in canonical form: `image/png`, no parameters. */
function isBareType(type: unknown): boolean {
  const parsed = parseContentType(type);
  return parsed !== undefined && parsed.essence === type && Object.keys(parsed.parameters).length === 0;
}

/**
 * A validated, frozen policy: the design document's defaults (the types of
 * {@link DEFAULT_UPLOAD_TYPES}, 50 MiB per file, 500 MiB per session, 255-byte filenames) with
 * any of them replaced. Throws INVALID_INPUT for a malformed option.
 */
export function createUploadPolicy(options: UploadPolicyOptions = {}): UploadPolicy {
  const allowed = options.allowedTypes ?? DEFAULT_UPLOAD_TYPES;
  if (typeof allowed !== "object" || allowed === null || Object.keys(allowed).length === 0) {
    throw invalidPolicy("allowedTypes", allowed, "a non-empty map of extension → MIME types");
  }
  const allowedTypes: Record<string, readonly string[]> = {};
  for (const [extension, types] of Object.entries(allowed)) {
    if (!EXTENSION_PATTERN.test(extension)) {
      throw invalidPolicy("an extension", extension, "1 to 16 lowercase letters or digits, without the dot");
    }
    if (!Array.isArray(types) || types.length === 0 || !types.every(isBareType)) {
      throw invalidPolicy(
        `the types of .${extension}`,
        types,
        'a non-empty list of lowercase MIME types without parameters, such as ["image/png"]',
      );
    }
    allowedTypes[extension] = Object.freeze([...types]);
  }
  const maxFileSizeBytes = positiveBytes(
    "maxFileSizeBytes",
    options.maxFileSizeBytes ?? DEFAULT_MAX_FILE_SIZE_MIB * MIB,
  );
  const maxTotalSizeBytes = positiveBytes(
    "maxTotalSizeBytes",
    options.maxTotalSizeBytes ?? DEFAULT_MAX_TOTAL_SIZE_MIB * MIB,
  );
  const maxFilenameBytes = positiveBytes(
    "maxFilenameBytes",
    options.maxFilenameBytes ?? MAX_UPLOAD_FILENAME_BYTES,
  );
  if (maxFilenameBytes > MAX_UPLOAD_FILENAME_BYTES) {
    throw invalidPolicy("maxFilenameBytes", maxFilenameBytes, `at most ${MAX_UPLOAD_FILENAME_BYTES}`);
  }
  return Object.freeze({
    allowedTypes: Object.freeze(allowedTypes),
    maxFileSizeBytes,
    maxTotalSizeBytes,
    maxFilenameBytes,
  });
}

/** The policy with every default. */
export const DEFAULT_UPLOAD_POLICY: UploadPolicy = createUploadPolicy();

/** A size setting in MiB (decimals allowed) as whole bytes; undefined when unset. */
function mebibytes(env: Env, name: string): number | undefined {
  const value = envPositiveNumber(env, name);
  return value === undefined ? undefined : Math.floor(value * MIB);
}

/**
 * The policy's size options from the environment, in MiB (1 MiB = 1,048,576 bytes):
 * `ARTIFACT_MAX_FILE_SIZE_MB` (per file) and `ARTIFACT_MAX_TOTAL_SIZE_MB` (per session). The
 * names are the design document's, kept as it gives them. Unset or blank variables are left out,
 * so the defaults hold; anything but a positive number is INVALID_INPUT (`INVALID_SETTING`).
 */
export function uploadPolicyOptionsFromEnv(env: Env): UploadPolicyOptions {
  const maxFileSizeBytes = mebibytes(env, "ARTIFACT_MAX_FILE_SIZE_MB");
  const maxTotalSizeBytes = mebibytes(env, "ARTIFACT_MAX_TOTAL_SIZE_MB");
  return {
    ...(maxFileSizeBytes === undefined ? {} : { maxFileSizeBytes }),
    ...(maxTotalSizeBytes === undefined ? {} : { maxTotalSizeBytes }),
  };
}

/** A file as a request describes it, before any check: each field may be anything. */
export interface UploadCandidate {
  filename: unknown;
  contentType: unknown;
  fileSize: unknown;
}

/** A file that passed {@link checkUpload}. */
export interface CheckedUpload {
  filename: string;
  /** Lowercase, without the dot. */
  extension: string;
  /** Normalized: lowercase type, and `; charset=…` only when one was given. */
  contentType: string;
  fileSize: number;
}

/** `value` normalized to `type/subtype[; charset=x]`, or undefined when it is anything else. */
function uploadContentType(value: unknown): { essence: string; text: string } | undefined {
  const parsed = parseContentType(value);
  if (!parsed) return undefined;
  const names = Object.keys(parsed.parameters);
  if (names.length > 1 || (names.length === 1 && names[0] !== "charset")) return undefined;
  const charset = parsed.parameters.charset;
  if (charset !== undefined && !CHARSET_VALUE.test(charset)) return undefined;
  // A charset is a plain token (CHARSET_VALUE): it never needs quoting.
  return {
    essence: parsed.essence,
    text: charset === undefined ? parsed.essence : `${parsed.essence}; charset=${charset}`,
  };
}

/** The accepted types of an extension; own keys only, so "constructor" or "__proto__" is no type. */
function typesFor(policy: UploadPolicy, extension: string): readonly string[] | undefined {
  return Object.hasOwn(policy.allowedTypes, extension) ? policy.allowedTypes[extension] : undefined;
}

function allowedExtensions(policy: UploadPolicy): string {
  return Object.keys(policy.allowedTypes)
    .map((extension) => `.${extension}`)
    .join(", ");
}

/**
 * Checks a file against the policy: a safe basename, an allowed extension, a content type that
 * agrees with it, and a size within the per-file limit. Throws INVALID_INPUT (reasons
 * `INVALID_FILENAME`, `FILE_TYPE_NOT_ALLOWED`, `CONTENT_TYPE_MISMATCH`, `INVALID_FILE_SIZE`) or
 * TOO_LARGE (`FILE_TOO_LARGE`).
 */
export function checkUpload(policy: UploadPolicy, candidate: UploadCandidate): CheckedUpload {
  assertUploadFilename(candidate.filename, policy.maxFilenameBytes);
  const filename = candidate.filename;
  const extension = filenameExtension(filename);
  const accepted = typesFor(policy, extension);
  if (!accepted) {
    throw new StowageError(
      "INVALID_INPUT",
      `file type ${extension ? `".${extension}"` : "(no extension)"} of ${describeValue(filename)} is not allowed; allowed: ${allowedExtensions(policy)}`,
      { reason: "FILE_TYPE_NOT_ALLOWED", details: { extension, allowed: Object.keys(policy.allowedTypes) } },
    );
  }
  const contentType = uploadContentType(candidate.contentType);
  if (contentType === undefined || !accepted.includes(contentType.essence)) {
    throw new StowageError(
      "INVALID_INPUT",
      `contentType ${describeValue(candidate.contentType)} does not match ".${extension}"; accepted: ${accepted.join(", ")}`,
      { reason: "CONTENT_TYPE_MISMATCH", details: { extension, accepted: [...accepted] } },
    );
  }
  const { fileSize } = candidate;
  if (typeof fileSize !== "number" || !Number.isSafeInteger(fileSize) || fileSize < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `fileSize must be a non-negative integer number of bytes, got ${describeValue(fileSize)}`,
      { reason: "INVALID_FILE_SIZE" },
    );
  }
  if (fileSize > policy.maxFileSizeBytes) {
    throw new StowageError(
      "TOO_LARGE",
      `file size ${formatSize(fileSize)} (${fileSize} bytes) exceeds the maximum of ${formatSize(policy.maxFileSizeBytes)} (${policy.maxFileSizeBytes} bytes) per file`,
      { reason: "FILE_TOO_LARGE", details: { fileSize, limit: policy.maxFileSizeBytes } },
    );
  }
  return { filename, extension, contentType: contentType.text, fileSize };
}

/** The content type an uploader should send for `filename`, or undefined when its type is not allowed. */
export function contentTypeForFilename(policy: UploadPolicy, filename: string): string | undefined {
  if (uploadFilenameProblem(filename, policy.maxFilenameBytes) !== undefined) return undefined;
  return typesFor(policy, filenameExtension(filename))?.[0];
}
