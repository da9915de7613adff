import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { basename } from "node:path";
import {
  describeValue,
  errnoOf,
  fromSystemError,
  mapConcurrent,
  StowageError,
  type StowageErrorCode,
  safeIdProblem,
} from "@stowage/core";
import {
  UPLOAD_COMPLETE_PATH,
  UPLOAD_URL_PATH,
  type UploadUrlRequestBody,
  type UploadUrlResponseBody,
} from "../protocol.js";
import {
  checkUpload,
  contentTypeForFilename,
  DEFAULT_UPLOAD_POLICY,
  type UploadPolicy,
} from "../upload-policy.js";
import { sha256OfFile, type UploadProgress } from "./file-body.js";
import { openInsideRoot } from "./open-inside-root.js";
import { readOptions } from "./read-options.js";
import { type RequestCounter, type RetryPolicy, withRetries } from "./retry.js";
import {
  putFile,
  RequestFailure,
  requestCompletion,
  requestGrant,
  type Transport,
  transientFailure,
  urlRefused,
} from "./upload-requests.js";

const DEFAULT_UPLOAD_RETRIES = 3;
const DEFAULT_RETRY_DELAY_MS = 500;
const DEFAULT_API_TIMEOUT_MS = 30_000;
const DEFAULT_UPLOAD_TIMEOUT_MS = 10 * 60 * 1000;
const DEFAULT_UPLOAD_CONCURRENCY = 3;

/** Options of {@link uploadFile}: one file, one session. */
export interface UploadFileOptions {
  /**
   * The backend, e.g. `https://api.example.com/`; the requests go to
   * `<apiBase>/agents/artifacts/upload-url` (the design document's path) and, after the PUT,
   * `<apiBase>/agents/artifacts/complete`.
   */
  apiBase: string;
  apiKey: string;
  sessionId: string;
  filePath: string;
  /**
   * Only files inside this directory are uploaded, opened by walking down from it one name at a
   * time without following a link; a relative `filePath` is taken from it, an absolute one must
   * start with it. Anything outside is FORBIDDEN (`OUTSIDE_ROOT`), and so is a path through a
   * symbolic link below the root, wherever it leads (`SYMLINK_REFUSED`), and a file with other
   * names (`HARD_LINKED`); a root that is the file system's `/` is INVALID_INPUT
   * (`INVALID_UPLOAD_ROOT`). Give it wherever a model chooses the path. Default: none, any file
   * this process can read (a relative path is taken from the process's directory).
   */
  root?: string;
  /** The name to store the file under; default the base name of `filePath`. */
  filename?: string;
  /** The policy to check against locally; default `DEFAULT_UPLOAD_POLICY` (the server's decides). */
  policy?: UploadPolicy;
  /** Extra attempts after the first, for the URL request, the upload and the completion each; default 3. */
  retries?: number;
  /** First backoff step in ms, doubled per attempt with jitter (a Retry-After wins); default 500. */
  retryDelayMs?: number;
  /** Time limit of one upload-URL request in ms; default 30,000. */
  apiTimeoutMs?: number;
  /** Time limit of one PUT of the bytes in ms; default 600,000 (10 minutes). */
  uploadTimeoutMs?: number;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Called as the bytes are sent (each attempt starts again from 0); errors it throws are ignored. */
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
}

/** What happened to one file. */
export interface UploadFileResult {
  success: boolean;
  filename: string;
  /** Why it failed, for the agent to read. */
  error?: string;
  /** The code of the failure: the server's (core's wire format), or the local check's. */
  code?: StowageErrorCode;
  reason?: string;
  /** The stored key, on success. */
  key?: string;
  size?: number;
  sha256?: string;
  /**
   * Tries of the upload: 1 when every request succeeded the first time, one more for each request
   * retried (or URL asked for again); 0 when it failed before any request.
   */
  attempts: number;
  /** HTTP requests made: URL requests, PUTs and completions (3 for a first-try success). */
  requests: number;
}

/** Options of {@link uploadFiles}. */
export interface UploadFilesOptions {
  /** Files uploaded at once; default 3. */
  concurrency?: number;
  /** Given to every upload that has no signal of its own. */
  signal?: AbortSignal;
}

interface Settings {
  apiUrl: string;
  completeUrl: string;
  apiKey: string;
  sessionId: string;
  filePath: string;
  root: string | undefined;
  filename: string;
  policy: UploadPolicy;
  retry: RetryPolicy;
  transport: Transport;
  onProgress: ((progress: UploadProgress) => void) | undefined;
  signal: AbortSignal | undefined;
}

function fail(message: string): never {
  throw new StowageError("INVALID_INPUT", message);
}

function settingsOf(options: UploadFileOptions, filename: string): Settings {
  if (typeof options !== "object" || options === null)
    fail(`options must be an object, got ${describeValue(options)}`);
  const { apiBase, apiKey, sessionId, filePath } = options;
  let base: URL | undefined;
  try {
    base = typeof apiBase === "string" ? new URL(apiBase) : undefined;
  } catch {
    base = undefined;
  }
  if (!base || (base.protocol !== "http:" && base.protocol !== "https:")) {
    fail(`apiBase must be an http(s) URL, got ${describeValue(apiBase)}`);
  }
  if (typeof apiKey !== "string" || apiKey.length === 0) fail("apiKey must be a non-empty string");
  const sessionProblem = safeIdProblem(sessionId);
  if (sessionProblem) fail(`sessionId ${sessionProblem}, got ${describeValue(sessionId)}`);
  if (typeof filePath !== "string" || filePath.length === 0 || filePath.includes("\u0000")) {
    throw new StowageError(
      "INVALID_INPUT",
      `filePath must be a non-empty path without NUL, got ${describeValue(filePath)}`,
      { reason: "INVALID_PATH" },
    );
  }
  const count = (what: string, value: number | undefined, fallback: number, min: number) => {
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < min)
      fail(`${what} must be an integer >= ${min}, got ${describeValue(value)}`);
    return value;
  };
  const { root } = options;
  if (root !== undefined && (typeof root !== "string" || root.length === 0 || root.includes("\u0000"))) {
    fail(`root must be a non-empty path, got ${describeValue(root)}`);
  }
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== "function") fail("fetch is not available; pass options.fetch");
  const api = base.href.replace(/\/+$/, "");
  return {
    apiUrl: `${api}${UPLOAD_URL_PATH}`,
    completeUrl: `${api}${UPLOAD_COMPLETE_PATH}`,
    apiKey,
    sessionId,
    filePath,
    root,
    filename,
    policy: options.policy ?? DEFAULT_UPLOAD_POLICY,
    retry: {
      retries: count("retries", options.retries, DEFAULT_UPLOAD_RETRIES, 0),
      baseDelayMs: count("retryDelayMs", options.retryDelayMs, DEFAULT_RETRY_DELAY_MS, 0),
      signal: options.signal,
      transient: transientFailure,
    },
    transport: {
      fetch: fetchImpl,
      customFetch: options.fetch !== undefined,
      signal: options.signal,
      apiTimeoutMs: count("apiTimeoutMs", options.apiTimeoutMs, DEFAULT_API_TIMEOUT_MS, 1),
      uploadTimeoutMs: count("uploadTimeoutMs", options.uploadTimeoutMs, DEFAULT_UPLOAD_TIMEOUT_MS, 1),
    },
    onProgress: typeof options.onProgress === "function" ? options.onProgress : undefined,
    signal: options.signal,
  };
}

/** An open file to upload: its size and SHA-256 as checked before any request. */
interface OpenUpload {
  handle: FileHandle;
  size: number;
  sha256: string;
}

/** The failure of reaching `filePath`: NOT_FOUND, FORBIDDEN, or what the system said. */
function unreachable(err: unknown, filePath: string): StowageError {
  const errno = errnoOf(err);
  if (errno === "ENOENT" || errno === "ENOTDIR")
    return new StowageError("NOT_FOUND", `file not found: ${filePath}`);
  if (errno === "EACCES" || errno === "EPERM") {
    return new StowageError("FORBIDDEN", `file is not readable: ${filePath}`);
  }
  return fromSystemError(err, `open ${filePath}`);
}

// O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever, holding a thread
// of libuv's pool; with it the open returns and the descriptor's fstat refuses it.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * Opens the file and checks it (a regular file within the policy's limits), then hashes it,
 * streamed from disk. The handle stays open for the PUT, so the bytes sent are this file's even
 * if the path is replaced meanwhile; the caller closes it. Under a root, see {@link openInsideRoot}.
 */
async function openUpload(settings: Settings, contentType: string): Promise<OpenUpload> {
  const { filePath, filename, policy, root } = settings;
  let handle: FileHandle;
  try {
    handle =
      root === undefined ? await open(filePath, OPEN_FLAGS) : (await openInsideRoot(root, filePath)).handle;
  } catch (err) {
    throw StowageError.is(err) ? err : unreachable(err, filePath);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      throw new StowageError("FORBIDDEN", `not a regular file: ${filePath}`, {
        reason: "NOT_A_REGULAR_FILE",
      });
    }
    checkUpload(policy, { filename, contentType, fileSize: info.size });
    const sha256 = await sha256OfFile(handle, info.size, settings.signal);
    return { handle, size: info.size, sha256 };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Fails with CONFLICT when the file's size changed since it was hashed: its URL binds the old one. */
async function assertUnchanged(file: OpenUpload): Promise<void> {
  const { size } = await file.handle.stat();
  if (size !== file.size) {
    throw new StowageError(
      "CONFLICT",
      `the file changed size while uploading (${file.size} → ${size} bytes)`,
      {
        reason: "FILE_CHANGED",
      },
    );
  }
}

async function upload(options: UploadFileOptions, filename: string, counter: RequestCounter) {
  const settings = settingsOf(options, filename);
  const contentType = contentTypeForFilename(settings.policy, filename) ?? "";
  const file = await openUpload(settings, contentType);
  try {
    const body: UploadUrlRequestBody = {
      agentSessionId: settings.sessionId,
      filename,
      contentType,
      fileSize: file.size,
      sha256: file.sha256,
    };
    const { retry, transport, apiUrl, completeUrl, apiKey, onProgress } = settings;
    const listener = onProgress ? { filename, onProgress } : undefined;
    const grantOnce = () => withRetries(retry, counter, () => requestGrant(transport, apiUrl, apiKey, body));
    const putOnce = (grant: UploadUrlResponseBody) =>
      withRetries(retry, counter, async () => {
        await assertUnchanged(file);
        // Each attempt reads the file from its start.
        await putFile(transport, grant, file, listener);
      });
    let grant = await grantOnce();
    try {
      await putOnce(grant);
    } catch (err) {
      if (!urlRefused(err)) throw err;
      // One fresh URL: the first may have expired during retries. A try of its own.
      counter.retries++;
      grant = await grantOnce();
      await putOnce(grant);
    }
    // The server verifies what landed and counts it; a mismatch is its refusal, INTEGRITY.
    await withRetries(retry, counter, () =>
      requestCompletion(transport, completeUrl, apiKey, { agentSessionId: settings.sessionId, filename }),
    );
    return { key: grant.key, size: file.size, sha256: file.sha256 };
  } finally {
    await file.handle.close();
  }
}

/** A counter as a result reports it. */
function countsOf(counter: RequestCounter): Pick<UploadFileResult, "attempts" | "requests"> {
  return { attempts: counter.requests === 0 ? 0 : 1 + counter.retries, requests: counter.requests };
}

/** The result of a failed upload of `filename`, saying why. */
export function failureResult(
  filename: string,
  error: StowageError,
  counter: RequestCounter = { requests: 0, retries: 0 },
): UploadFileResult {
  return {
    success: false,
    filename,
    error: error.message,
    code: error.code,
    ...(error.reason === undefined ? {} : { reason: error.reason }),
    ...countsOf(counter),
  };
}

/** The StowageError behind any failure of {@link upload}. */
function failureOf(err: unknown, aborted: boolean): StowageError {
  if (aborted) return new StowageError("ABORTED", "upload aborted");
  if (err instanceof RequestFailure) return err.error;
  if (StowageError.is(err)) return err;
  return new StowageError(
    "INTERNAL",
    err instanceof Error ? err.message : `upload failed: ${describeValue(err)}`,
  );
}

/**
 * Uploads one file to the session's storage: checks it locally against the policy, hashes it
 * (streamed from disk), asks the backend for a signed URL, PUTs the bytes (streamed from disk)
 * with exactly the signed headers, then asks the backend to verify and count the upload
 * (`POST /agents/artifacts/complete`), retrying transient failures (Retry-After honoured). Never
 * throws: the result says what happened, with the server's code when it refused (INTEGRITY,
 * `UPLOAD_MISMATCH`, when the stored bytes are not the file's).
 */
export async function uploadFile(options: UploadFileOptions): Promise<UploadFileResult> {
  const counter: RequestCounter = { requests: 0, retries: 0 };
  let filename = "";
  let signal: AbortSignal | undefined;
  try {
    // Inside the try: options whose getters throw (a Proxy, a hostile object) are a result too.
    const given = readOptions(options, "uploadFile options") as UploadFileOptions;
    signal = given.signal;
    filename = typeof given.filePath === "string" ? basename(given.filePath) : "";
    if (given.filename !== undefined) {
      if (typeof given.filename !== "string")
        fail(`filename must be a string, got ${describeValue(given.filename)}`);
      filename = given.filename;
    }
    const done = await upload(given, filename, counter);
    return { success: true, filename, ...done, ...countsOf(counter) };
  } catch (err) {
    return failureResult(filename, failureOf(err, signal?.aborted === true), counter);
  }
}

/** Files uploaded at once: `value` when it is a positive integer, else the default, 3. */
export function uploadConcurrency(value: number | undefined): number {
  return Number.isSafeInteger(value) && value! > 0 ? value! : DEFAULT_UPLOAD_CONCURRENCY;
}

/** Uploads several files, 3 at a time by default; one result per file, in order. Never throws. */
export async function uploadFiles(
  uploads: readonly UploadFileOptions[],
  options: UploadFilesOptions = {},
): Promise<UploadFileResult[]> {
  if (!Array.isArray(uploads)) {
    return [failureResult("", new StowageError("INVALID_INPUT", "uploads must be an array"))];
  }
  let shared: UploadFilesOptions;
  try {
    shared = readOptions(options, "uploadFiles options");
  } catch (err) {
    return [failureResult("", err as StowageError)];
  }
  const concurrency = uploadConcurrency(shared.concurrency);
  // uploadFile never throws, so every file gets its own result.
  return mapConcurrent(uploads, concurrency, (upload) => {
    let given = upload;
    try {
      if (shared.signal && !upload?.signal) given = { ...upload, signal: shared.signal };
    } catch {
      // Options that cannot be read: uploadFile reports them.
    }
    return uploadFile(given);
  });
}
