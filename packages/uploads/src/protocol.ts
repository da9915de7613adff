// The upload API as the design document gives it: paths and bodies are wire names that clients
// already use, so they keep the document's word "artifacts" (`/agents/artifacts/upload-url`,
// `{ "artifacts": [...] }`). Errors use core's one wire format (`errorResponse`).

/**
 * `POST` here with an {@link UploadUrlRequestBody} and `Authorization: Bearer <API key>` →
 * {@link UploadUrlResponseBody}. The path is the design document's wire name.
 */
export const UPLOAD_URL_PATH = "/agents/artifacts/upload-url";

/**
 * `POST` here with an {@link UploadCompleteRequestBody} after the PUT →
 * {@link UploadCompleteResponseBody}: the upload is verified and counted. Stowage's addition to
 * the design document's API (whose clients never call it: a listing verifies what nobody
 * completed). A mismatch answers INTEGRITY (`UPLOAD_MISMATCH`, 422) and the file is deleted.
 */
export const UPLOAD_COMPLETE_PATH = "/agents/artifacts/complete";

/**
 * `GET` here → {@link UploadPolicyResponseBody}: the policy the server enforces, so that an agent's
 * `UploadArtifact` tool states the live limits and checks against them (Stowage's addition).
 */
export const UPLOAD_POLICY_PATH = "/agents/artifacts/policy";

/** Largest JSON request body the handler reads, in bytes; a larger one is TOO_LARGE. */
export const MAX_UPLOAD_REQUEST_BODY_BYTES = 16 * 1024;

/** `GET` → {@link UploadListResponseBody}. `/artifacts` is the design document's wire name. */
export function uploadListPath(sessionId: string): string {
  return `/agents/${encodeURIComponent(sessionId)}/artifacts`;
}

/** `GET` → {@link DownloadUrlResponseBody}. */
export function uploadDownloadPath(sessionId: string, filename: string): string {
  return `${uploadListPath(sessionId)}/${encodeURIComponent(filename)}/download`;
}

/** The body of `POST /agents/artifacts/upload-url`. */
export interface UploadUrlRequestBody {
  agentSessionId: string;
  filename: string;
  contentType: string;
  fileSize: number;
  /** Hex SHA-256 of the file; when given, the URL binds it and the PUT must send it. */
  sha256?: string;
}

/** The answer to an upload-URL request: PUT the file to `url` with exactly `headers`. */
export interface UploadUrlResponseBody {
  url: string;
  /** The store key the file will have. */
  key: string;
  expiresIn: number;
  /** Send exactly these with the PUT. */
  headers: Record<string, string>;
}

/** The body of `POST /agents/artifacts/complete`. */
export interface UploadCompleteRequestBody {
  agentSessionId: string;
  filename: string;
}

/** The answer to a completion: the verified upload, as a listing shows it. */
export type UploadCompleteResponseBody = UploadListEntry;

/** One upload in a listing. */
export interface UploadListEntry {
  filename: string;
  size: number;
  /** `1.0 MiB` (1,024-byte units, named as such; the design document's example shows `1.0 MB`). */
  sizeFormatted: string;
  /** ISO 8601. */
  lastModified: string;
  /** ISO 8601: when the deployment's retention deletes it; absent where uploads are kept until deleted. */
  expiresAt?: string;
}

/** The body of `GET /agents/{sessionId}/artifacts`; `artifacts` is the document's wire name. */
export interface UploadListResponseBody {
  artifacts: UploadListEntry[];
}

/** The body of `GET /agents/artifacts/policy`: the server's `UploadPolicy`, sizes in bytes. */
export interface UploadPolicyResponseBody {
  /** Extension (lowercase, no dot) → accepted MIME types; the first is what an uploader sends. */
  allowedTypes: Record<string, string[]>;
  maxFileSizeBytes: number;
  maxTotalSizeBytes: number;
  maxFilenameBytes: number;
}

/** The body of `GET /agents/{sessionId}/artifacts/{filename}/download`. */
export interface DownloadUrlResponseBody {
  url: string;
  expiresIn: number;
}
