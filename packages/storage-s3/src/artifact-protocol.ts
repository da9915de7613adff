import { HTTP_STATUS_BY_CODE, StowageError, type StowageErrorCode } from "@stowage/core";

/** `POST` here with an {@link UploadUrlRequestBody} and `Authorization: Bearer <API key>`. */
export const ARTIFACT_UPLOAD_URL_PATH = "/agents/artifacts/upload-url";

/** `GET` → `{ artifacts: [{ filename, size, sizeFormatted, lastModified }] }`. */
export function artifactListPath(sessionId: string): string {
  return `/agents/${encodeURIComponent(sessionId)}/artifacts`;
}

/** `GET` → `{ url, expiresIn }`. */
export function artifactDownloadPath(sessionId: string, filename: string): string {
  return `${artifactListPath(sessionId)}/${encodeURIComponent(filename)}/download`;
}

export interface UploadUrlRequestBody {
  agentSessionId: string;
  filename: string;
  contentType: string;
  fileSize: number;
  /** Hex SHA-256 of the file. */
  sha256?: string;
}

export interface UploadUrlResponseBody {
  url: string;
  key: string;
  expiresIn: number;
  /** Send exactly these with the PUT. */
  headers: Record<string, string>;
}

export interface ErrorResponseBody {
  /** What went wrong, for people. */
  error: string;
  code: StowageErrorCode;
  reason?: string;
}

/**
 * The HTTP status and JSON body for an error: a StowageError keeps its code and message;
 * anything else is a 500 without internals.
 */
export function errorResponse(err: unknown): { status: number; body: ErrorResponseBody } {
  if (StowageError.is(err)) {
    return {
      status: HTTP_STATUS_BY_CODE[err.code],
      body: {
        error: err.message,
        code: err.code,
        ...(err.reason === undefined ? {} : { reason: err.reason }),
      },
    };
  }
  return { status: 500, body: { error: "internal error", code: "INTERNAL" } };
}
