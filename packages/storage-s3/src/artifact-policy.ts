import { describeValue, StowageError } from "@stowage/core";
import {
  artifactFilenameProblem,
  assertArtifactFilename,
  DEFAULT_MAX_FILENAME_BYTES,
  filenameExtension,
} from "./artifact-filename.js";
import { formatSize } from "./format-size.js";

/** One megabyte as the size limits count it: 1,048,576 bytes. */
export const MB = 1024 * 1024;
/** Per-file limit in MB unless `ARTIFACT_MAX_FILE_SIZE_MB` or an option says otherwise. */
export const DEFAULT_MAX_FILE_SIZE_MB = 50;
/** Per-session total in MB unless `ARTIFACT_MAX_TOTAL_SIZE_MB` or an option says otherwise. */
export const DEFAULT_MAX_TOTAL_SIZE_MB = 500;

/**
 * Extensions accepted by default and the MIME types each accepts; an upload's extension and
 * content type must both appear here and agree. The first type is what an uploader sends.
 */
export const DEFAULT_ARTIFACT_TYPES: Readonly<Record<string, readonly string[]>> = Object.freeze({
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

export interface ArtifactPolicy {
  /** Extension (lowercase, no dot) → accepted MIME types (lowercase, no parameters). */
  readonly allowedTypes: Readonly<Record<string, readonly string[]>>;
  readonly maxFileSizeBytes: number;
  readonly maxTotalSizeBytes: number;
  readonly maxFilenameBytes: number;
}

export type ArtifactPolicyOptions = Partial<ArtifactPolicy>;

const EXTENSION_PATTERN = /^[a-z0-9]{1,16}$/;
const MIME_ESSENCE_PATTERN = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;
const CHARSET_PARAMETER = /^charset=("?)([a-z0-9._-]{1,40})\1$/;

function invalidPolicy(what: string, value: unknown, accepted: string): StowageError {
  return new StowageError(
    "INVALID_INPUT",
    `artifact policy: ${what} must be ${accepted}, got ${describeValue(value)}`,
  );
}

function positiveBytes(what: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw invalidPolicy(what, value, "a positive integer number of bytes");
  }
  return value;
}

/** A validated, frozen policy: the defaults of the issue with any of them replaced. */
export function createArtifactPolicy(options: ArtifactPolicyOptions = {}): ArtifactPolicy {
  const allowed = options.allowedTypes ?? DEFAULT_ARTIFACT_TYPES;
  if (typeof allowed !== "object" || allowed === null || Object.keys(allowed).length === 0) {
    throw invalidPolicy("allowedTypes", allowed, "a non-empty map of extension → MIME types");
  }
  const allowedTypes: Record<string, readonly string[]> = {};
  for (const [extension, types] of Object.entries(allowed)) {
    if (!EXTENSION_PATTERN.test(extension)) {
      throw invalidPolicy("an extension", extension, "1 to 16 lowercase letters or digits, without the dot");
    }
    if (
      !Array.isArray(types) ||
      types.length === 0 ||
      !types.every((type) => MIME_ESSENCE_PATTERN.test(type))
    ) {
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
    options.maxFileSizeBytes ?? DEFAULT_MAX_FILE_SIZE_MB * MB,
  );
  const maxTotalSizeBytes = positiveBytes(
    "maxTotalSizeBytes",
    options.maxTotalSizeBytes ?? DEFAULT_MAX_TOTAL_SIZE_MB * MB,
  );
  const maxFilenameBytes = positiveBytes(
    "maxFilenameBytes",
    options.maxFilenameBytes ?? DEFAULT_MAX_FILENAME_BYTES,
  );
  if (maxFilenameBytes > DEFAULT_MAX_FILENAME_BYTES) {
    throw invalidPolicy("maxFilenameBytes", maxFilenameBytes, `at most ${DEFAULT_MAX_FILENAME_BYTES}`);
  }
  return Object.freeze({
    allowedTypes: Object.freeze(allowedTypes),
    maxFileSizeBytes,
    maxTotalSizeBytes,
    maxFilenameBytes,
  });
}

/** The policy with every default. */
export const DEFAULT_ARTIFACT_POLICY: ArtifactPolicy = createArtifactPolicy();

function megabytes(env: Record<string, string | undefined>, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !Number.isFinite(value) || value <= 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `${name} must be a positive number of MB, got ${describeValue(raw)}`,
    );
  }
  return Math.floor(value * MB);
}

/**
 * A policy from `ARTIFACT_MAX_FILE_SIZE_MB` and `ARTIFACT_MAX_TOTAL_SIZE_MB` (1 MB = 1,048,576
 * bytes), on top of `options`; unset or empty variables keep the option or the default.
 */
export function artifactPolicyFromEnv(
  env: Record<string, string | undefined> = process.env,
  options: ArtifactPolicyOptions = {},
): ArtifactPolicy {
  const maxFileSizeBytes = megabytes(env, "ARTIFACT_MAX_FILE_SIZE_MB");
  const maxTotalSizeBytes = megabytes(env, "ARTIFACT_MAX_TOTAL_SIZE_MB");
  return createArtifactPolicy({
    ...options,
    ...(maxFileSizeBytes === undefined ? {} : { maxFileSizeBytes }),
    ...(maxTotalSizeBytes === undefined ? {} : { maxTotalSizeBytes }),
  });
}

export interface ArtifactCandidate {
  filename: unknown;
  contentType: unknown;
  fileSize: unknown;
}

export interface CheckedArtifact {
  filename: string;
  /** Lowercase, without the dot. */
  extension: string;
  /** Normalized: lowercase type, and `; charset=…` only when one was given. */
  contentType: string;
  fileSize: number;
}

/** Normalizes `value` to `type/subtype[; charset=x]`, or undefined when it is anything else. */
export function normalizeContentType(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > 255) return undefined;
  const [essence = "", ...parameters] = value
    .toLowerCase()
    .split(";")
    .map((part) => part.trim());
  if (!MIME_ESSENCE_PATTERN.test(essence) || parameters.length > 1) return undefined;
  if (parameters.length === 0) return essence;
  const charset = CHARSET_PARAMETER.exec(parameters[0]!);
  return charset ? `${essence}; charset=${charset[2]}` : undefined;
}

const essenceOf = (contentType: string) => contentType.split(";")[0]!;

/** The accepted types of an extension; own keys only, so "constructor" or "__proto__" is no type. */
function typesFor(policy: ArtifactPolicy, extension: string): readonly string[] | undefined {
  return Object.hasOwn(policy.allowedTypes, extension) ? policy.allowedTypes[extension] : undefined;
}

function allowedExtensions(policy: ArtifactPolicy): string {
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
export function checkArtifact(policy: ArtifactPolicy, candidate: ArtifactCandidate): CheckedArtifact {
  assertArtifactFilename(candidate.filename, policy.maxFilenameBytes);
  const filename = candidate.filename;
  const extension = filenameExtension(filename);
  const accepted = typesFor(policy, extension);
  if (!accepted) {
    throw new StowageError(
      "INVALID_INPUT",
      `file type ${extension ? `".${extension}"` : "(no extension)"} of ${describeValue(filename)} is not allowed; allowed: ${allowedExtensions(policy)}`,
      { reason: "FILE_TYPE_NOT_ALLOWED", details: { extension } },
    );
  }
  const contentType = normalizeContentType(candidate.contentType);
  if (contentType === undefined || !accepted.includes(essenceOf(contentType))) {
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
  return { filename, extension, contentType, fileSize };
}

/** The content type an uploader should send for `filename`, or undefined when its type is not allowed. */
export function contentTypeForFilename(policy: ArtifactPolicy, filename: string): string | undefined {
  if (artifactFilenameProblem(filename, policy.maxFilenameBytes) !== undefined) return undefined;
  return typesFor(policy, filenameExtension(filename))?.[0];
}
