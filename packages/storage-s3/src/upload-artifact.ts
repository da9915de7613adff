import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { basename } from "node:path";
import { describeValue, errnoOf, mapConcurrent, StowageError } from "@stowage/core";
import { idProblem } from "./artifact-keys.js";
import {
  type ArtifactPolicy,
  checkArtifact,
  contentTypeForFilename,
  DEFAULT_ARTIFACT_POLICY,
} from "./artifact-policy.js";
import {
  ARTIFACT_UPLOAD_URL_PATH,
  type UploadUrlRequestBody,
  type UploadUrlResponseBody,
} from "./artifact-protocol.js";
import { isTransientStatus, retryDelayMs, sleep } from "./retry.js";

/** Extra attempts after the first, for the URL request and for the upload each. */
export const DEFAULT_UPLOAD_RETRIES = 3;
/** First backoff step; doubles per attempt, with jitter. */
export const DEFAULT_RETRY_DELAY_MS = 500;
/** Time limit of one upload-URL request. */
export const DEFAULT_API_TIMEOUT_MS = 30_000;
/** Time limit of one PUT of the bytes. */
export const DEFAULT_UPLOAD_TIMEOUT_MS = 10 * 60 * 1000;
/** Files uploaded at once by `uploadArtifacts`. */
export const DEFAULT_UPLOAD_CONCURRENCY = 3;
/** Bytes handed to the network per step when progress is reported. */
export const PROGRESS_CHUNK_BYTES = 256 * 1024;

/** Where an upload stands: bytes handed to the network so far, out of the file's size. */
export interface UploadProgress {
  filename: string;
  sentBytes: number;
  totalBytes: number;
}

export interface UploadArtifactOptions {
  /** The backend, e.g. `https://api.example.com/`; the request goes to `<apiBase>/agents/artifacts/upload-url`. */
  apiBase: string;
  apiKey: string;
  sessionId: string;
  filePath: string;
  /** The policy to check against locally; default {@link DEFAULT_ARTIFACT_POLICY} (the server's decides). */
  policy?: ArtifactPolicy;
  /** Default {@link DEFAULT_UPLOAD_RETRIES}. */
  retries?: number;
  /** Default {@link DEFAULT_RETRY_DELAY_MS}. */
  retryDelayMs?: number;
  /** Default {@link DEFAULT_API_TIMEOUT_MS}. */
  apiTimeoutMs?: number;
  /** Default {@link DEFAULT_UPLOAD_TIMEOUT_MS}. */
  uploadTimeoutMs?: number;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Called as the bytes are sent (each attempt starts again from 0); errors it throws are ignored. */
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
}

export interface UploadArtifactResult {
  success: boolean;
  filename: string;
  /** Why it failed, for the agent to read. */
  error?: string;
  /** The stored key, on success. */
  key?: string;
  size?: number;
  sha256?: string;
  /** HTTP requests made (URL requests and PUTs). */
  attempts: number;
}

interface Settings {
  apiUrl: string;
  apiKey: string;
  sessionId: string;
  filePath: string;
  filename: string;
  policy: ArtifactPolicy;
  retries: number;
  baseDelayMs: number;
  apiTimeoutMs: number;
  uploadTimeoutMs: number;
  fetch: typeof fetch;
  onProgress: ((progress: UploadProgress) => void) | undefined;
  signal: AbortSignal | undefined;
}

/** A failure worth another attempt, as opposed to a refusal. */
class TransientError extends Error {
  constructor(
    message: string,
    readonly retryAfter?: string | null,
  ) {
    super(message);
  }
}

/** The PUT was refused (403): the URL may have expired while retrying, so a fresh one is worth it. */
class UploadRefusedError extends Error {}

function fail(message: string): never {
  throw new StowageError("INVALID_INPUT", message);
}

function settingsOf(options: UploadArtifactOptions, filename: string): Settings {
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
  const sessionProblem = idProblem(sessionId);
  if (sessionProblem) fail(`sessionId ${sessionProblem}, got ${describeValue(sessionId)}`);
  if (typeof filePath !== "string" || filePath.length === 0 || filePath.includes("\u0000")) {
    fail(`filePath must be a non-empty path, got ${describeValue(filePath)}`);
  }
  const count = (what: string, value: number | undefined, fallback: number, min: number) => {
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < min)
      fail(`${what} must be an integer >= ${min}, got ${describeValue(value)}`);
    return value;
  };
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== "function") fail("fetch is not available; pass options.fetch");
  return {
    apiUrl: `${base.href.replace(/\/+$/, "")}${ARTIFACT_UPLOAD_URL_PATH}`,
    apiKey,
    sessionId,
    filePath,
    filename,
    policy: options.policy ?? DEFAULT_ARTIFACT_POLICY,
    retries: count("retries", options.retries, DEFAULT_UPLOAD_RETRIES, 0),
    baseDelayMs: count("retryDelayMs", options.retryDelayMs, DEFAULT_RETRY_DELAY_MS, 0),
    apiTimeoutMs: count("apiTimeoutMs", options.apiTimeoutMs, DEFAULT_API_TIMEOUT_MS, 1),
    uploadTimeoutMs: count("uploadTimeoutMs", options.uploadTimeoutMs, DEFAULT_UPLOAD_TIMEOUT_MS, 1),
    fetch: fetchImpl,
    onProgress: typeof options.onProgress === "function" ? options.onProgress : undefined,
    signal: options.signal,
  };
}

/** Reads the file once: its bytes, after checking it is a regular file within the size limit. */
async function readArtifact(settings: Settings, contentType: string): Promise<Uint8Array> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(settings.filePath, "r");
  } catch (err) {
    const errno = errnoOf(err);
    if (errno === "ENOENT") fail(`file not found: ${settings.filePath}`);
    if (errno === "EACCES" || errno === "EPERM") fail(`file is not readable: ${settings.filePath}`);
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) fail(`not a regular file: ${settings.filePath}`);
    checkArtifact(settings.policy, { filename: settings.filename, contentType, fileSize: info.size });
    const bytes = await handle.readFile({ signal: settings.signal });
    // Checked again: the file may have grown between the stat and the read.
    checkArtifact(settings.policy, { filename: settings.filename, contentType, fileSize: bytes.byteLength });
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } finally {
    await handle.close();
  }
}

/** The `error` of a JSON error body, or the status line. */
async function errorText(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: unknown; code?: unknown; message?: unknown };
    const message =
      typeof body.error === "string"
        ? body.error
        : typeof (body.error as { message?: unknown })?.message === "string"
          ? (body.error as { message: string }).message
          : typeof body.message === "string"
            ? body.message
            : undefined;
    if (message)
      return `HTTP ${response.status}${typeof body.code === "string" ? ` ${body.code}` : ""}: ${message}`;
  } catch {
    // Not JSON: S3 answers XML; its <Code> is the useful part.
  }
  const code = /<Code>([^<]{1,64})<\/Code>/.exec(text)?.[1];
  return `HTTP ${response.status}${code ? ` ${code}` : ""}${response.statusText ? ` ${response.statusText}` : ""}`;
}

function validGrant(body: unknown): UploadUrlResponseBody {
  const grant = body as Partial<UploadUrlResponseBody> | null;
  let url: URL | undefined;
  try {
    url = typeof grant?.url === "string" ? new URL(grant.url) : undefined;
  } catch {
    url = undefined;
  }
  const headers = grant?.headers;
  if (
    !url ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    typeof headers !== "object" ||
    headers === null ||
    !Object.values(headers).every((value) => typeof value === "string")
  ) {
    throw new Error("the upload-URL response lacks a valid url or headers");
  }
  return grant as UploadUrlResponseBody;
}

/**
 * Runs `step` up to `1 + retries` times while it fails transiently. `attempts` counts requests.
 */
async function withRetries<T>(
  settings: Settings,
  counter: { attempts: number },
  step: () => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    counter.attempts++;
    try {
      return await step();
    } catch (err) {
      if (settings.signal?.aborted) throw err;
      if (!(err instanceof TransientError) || attempt >= settings.retries) throw err;
      await sleep(retryDelayMs(attempt, settings.baseDelayMs, err.retryAfter), settings.signal);
    }
  }
}

function timeoutSignal(settings: Settings, ms: number): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  return settings.signal ? AbortSignal.any([settings.signal, timeout]) : timeout;
}

/** A fetch whose network failures and timeouts are transient, unless the caller aborted. */
async function send(
  settings: Settings,
  what: string,
  url: string,
  init: RequestInit,
  ms: number,
): Promise<Response> {
  try {
    return await settings.fetch(url, { ...init, signal: timeoutSignal(settings, ms) });
  } catch (err) {
    if (settings.signal?.aborted) throw err;
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new TransientError(`${what} failed: ${(err as Error).message}${cause ? ` (${cause})` : ""}`);
  }
}

async function requestGrant(settings: Settings, body: UploadUrlRequestBody): Promise<UploadUrlResponseBody> {
  const response = await send(
    settings,
    "upload URL request",
    settings.apiUrl,
    {
      method: "POST",
      headers: { authorization: `Bearer ${settings.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    },
    settings.apiTimeoutMs,
  );
  if (!response.ok) {
    const message = `upload URL request failed: ${await errorText(response)}`;
    if (isTransientStatus(response.status))
      throw new TransientError(message, response.headers.get("retry-after"));
    throw new Error(message);
  }
  return validGrant(await response.json().catch(() => null));
}

/** The bytes as a stream that reports how much of it the network has taken. */
function reportingBody(settings: Settings, bytes: Uint8Array): ReadableStream<Uint8Array> {
  const report = settings.onProgress!;
  let sent = 0;
  const tell = () => {
    try {
      report({ filename: settings.filename, sentBytes: sent, totalBytes: bytes.byteLength });
    } catch {
      // A broken progress display must not break the upload.
    }
  };
  return new ReadableStream<Uint8Array>({
    start: tell,
    pull(controller) {
      if (sent >= bytes.byteLength) return controller.close();
      const chunk = bytes.subarray(sent, sent + PROGRESS_CHUNK_BYTES);
      sent += chunk.byteLength;
      controller.enqueue(chunk);
      tell();
    },
  });
}

async function putBytes(settings: Settings, grant: UploadUrlResponseBody, bytes: Uint8Array): Promise<void> {
  const body = settings.onProgress && bytes.byteLength > 0 ? reportingBody(settings, bytes) : bytes;
  const response = await send(
    settings,
    "upload",
    grant.url,
    // Exactly the signed headers: the signature binds them, anything else would be refused.
    // A stream body goes out with the signed content-length; undici needs duplex for it.
    { method: "PUT", headers: grant.headers, body, duplex: "half" } as RequestInit,
    settings.uploadTimeoutMs,
  );
  if (response.ok) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  const message = `upload to storage failed: ${await errorText(response)}`;
  if (isTransientStatus(response.status))
    throw new TransientError(message, response.headers.get("retry-after"));
  if (response.status === 403) throw new UploadRefusedError(message);
  throw new Error(message);
}

async function upload(options: UploadArtifactOptions, filename: string, counter: { attempts: number }) {
  const settings = settingsOf(options, filename);
  const contentType = contentTypeForFilename(settings.policy, filename) ?? "";
  const bytes = await readArtifact(settings, contentType);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const body: UploadUrlRequestBody = {
    agentSessionId: settings.sessionId,
    filename,
    contentType,
    fileSize: bytes.byteLength,
    sha256,
  };
  let grant = await withRetries(settings, counter, () => requestGrant(settings, body));
  try {
    await withRetries(settings, counter, () => putBytes(settings, grant, bytes));
  } catch (err) {
    if (!(err instanceof UploadRefusedError)) throw err;
    // One fresh URL: the first may have expired during retries.
    grant = await withRetries(settings, counter, () => requestGrant(settings, body));
    await withRetries(settings, counter, () => putBytes(settings, grant, bytes));
  }
  return { key: grant.key, size: bytes.byteLength, sha256 };
}

/**
 * Uploads one file to the session's artifacts: checks it locally against the policy, reads it
 * once (size and SHA-256), asks the backend for a presigned URL, and PUTs the bytes with exactly
 * the signed headers, retrying transient failures. Never throws: the result says what happened.
 */
export async function uploadArtifact(options: UploadArtifactOptions): Promise<UploadArtifactResult> {
  const filePath = (options as { filePath?: unknown } | null)?.filePath;
  const filename = typeof filePath === "string" ? basename(filePath) : "";
  const counter = { attempts: 0 };
  try {
    const done = await upload(options, filename, counter);
    return { success: true, filename, ...done, attempts: counter.attempts };
  } catch (err) {
    const error = options?.signal?.aborted
      ? "upload aborted"
      : err instanceof Error
        ? err.message
        : `upload failed: ${describeValue(err)}`;
    return { success: false, filename, error, attempts: counter.attempts };
  }
}

/** Uploads several files, {@link DEFAULT_UPLOAD_CONCURRENCY} at a time; one result per file, in order. */
export async function uploadArtifacts(
  uploads: readonly UploadArtifactOptions[],
  options: { concurrency?: number; signal?: AbortSignal } = {},
): Promise<UploadArtifactResult[]> {
  if (!Array.isArray(uploads)) {
    return [{ success: false, filename: "", error: "uploads must be an array", attempts: 0 }];
  }
  const concurrency =
    Number.isSafeInteger(options.concurrency) && options.concurrency! > 0
      ? options.concurrency!
      : DEFAULT_UPLOAD_CONCURRENCY;
  // uploadArtifact never throws, so every file gets its own result.
  return mapConcurrent(uploads, concurrency, (upload) =>
    uploadArtifact(options.signal && !upload?.signal ? { ...upload, signal: options.signal } : upload),
  );
}
