import type { FileHandle } from "node:fs/promises";
import { errorFromResponse, readStreamToBytes, StowageError } from "@stowage/core";
import type {
  UploadCompleteRequestBody,
  UploadCompleteResponseBody,
  UploadUrlRequestBody,
  UploadUrlResponseBody,
} from "../protocol.js";
import { fileBody, type ProgressListener } from "./file-body.js";
import { httpPut } from "./http-put.js";
import { isTransientStatus } from "./retry.js";

/** How the agent's requests go out. */
export interface Transport {
  fetch: typeof fetch;
  /**
   * The caller gave its own `fetch`: the PUT goes through it too (as a stream of fresh chunks);
   * otherwise the PUT goes through node:http with reused buffers.
   */
  customFetch: boolean;
  /** The caller's signal: an abort is never retried. */
  signal: AbortSignal | undefined;
  apiTimeoutMs: number;
  uploadTimeoutMs: number;
}

/** A request that failed: the error to report, and its HTTP status (none for a network failure). */
export class RequestFailure extends Error {
  constructor(
    readonly error: StowageError,
    readonly status: number | undefined,
    readonly retryAfter: string | null = null,
  ) {
    super(error.message);
  }
}

/** Network failures, timeouts and transient statuses are worth another attempt. */
export function transientFailure(err: unknown): { retryAfter: string | null } | undefined {
  if (!(err instanceof RequestFailure)) return undefined;
  if (err.status !== undefined && !isTransientStatus(err.status)) return undefined;
  return { retryAfter: err.retryAfter };
}

/** Storage refused the URL itself (403, or 410 from a signed fs URL): it may have expired while retrying. */
export function urlRefused(err: unknown): boolean {
  return err instanceof RequestFailure && (err.status === 403 || err.status === 410);
}

/**
 * Runs one request with the transport's time limit; its network failures and timeouts become
 * transient UNAVAILABLE, unless the caller aborted. A StowageError (the file changed) passes as is.
 */
async function send(
  transport: Transport,
  what: string,
  ms: number,
  exchange: (signal: AbortSignal) => Promise<Response>,
): Promise<Response> {
  const timeout = AbortSignal.timeout(ms);
  const signal = transport.signal ? AbortSignal.any([transport.signal, timeout]) : timeout;
  try {
    return await exchange(signal);
  } catch (err) {
    if (transport.signal?.aborted || StowageError.is(err)) throw err;
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    const message = `${what} failed: ${(err as Error).message}${cause ? ` (${cause})` : ""}`;
    throw new RequestFailure(new StowageError("UNAVAILABLE", message, { cause: err }), undefined);
  }
}

/** The grant, after checking it has an http(s) URL and string headers. */
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
    throw new StowageError("INTERNAL", "the upload-URL response lacks a valid url or headers", {
      reason: "INVALID_UPLOAD_GRANT",
    });
  }
  return grant as UploadUrlResponseBody;
}

/** Most bytes of a refused PUT's body read (what core's `errorFromResponse` reads at most: 64 KiB). */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * The failure of a refused PUT: storage answers in core's wire format (the fs store's handler)
 * or with S3's XML error, whose `<Code>` becomes the reason.
 */
async function storageFailure(response: Response): Promise<RequestFailure> {
  const text = response.body
    ? await readStreamToBytes(response.body, { maxBytes: MAX_ERROR_BODY_BYTES }).then(
        (bytes) => new TextDecoder().decode(bytes),
        () => "",
      )
    : "";
  const { status, statusText } = response;
  let error = await errorFromResponse(new Response(text, { status, statusText }), "upload to storage failed");
  const s3Code = /<Code>([^<]{1,64})<\/Code>/.exec(text)?.[1];
  if (s3Code && error.reason === undefined) {
    error = new StowageError(error.code, `${error.message} (${s3Code})`, {
      reason: s3Code,
      ...(error.details ? { details: error.details } : {}),
    });
  }
  return new RequestFailure(error, status, response.headers.get("retry-after"));
}

/** POSTs a JSON body to the API with the key; a refusal is read in core's one wire format only. */
async function postJson(
  transport: Transport,
  what: string,
  url: string,
  apiKey: string,
  body: UploadUrlRequestBody | UploadCompleteRequestBody,
): Promise<unknown> {
  const response = await send(transport, what, transport.apiTimeoutMs, (signal) =>
    transport.fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal,
    }),
  );
  if (!response.ok) {
    const error = await errorFromResponse(response, `${what} failed`);
    throw new RequestFailure(error, response.status, response.headers.get("retry-after"));
  }
  return response.json().catch(() => null);
}

/**
 * Asks the API for an upload URL. A refusal is read in core's one wire format only (through
 * `errorFromResponse`): the server's code and reason reach the result.
 */
export async function requestGrant(
  transport: Transport,
  apiUrl: string,
  apiKey: string,
  body: UploadUrlRequestBody,
): Promise<UploadUrlResponseBody> {
  return validGrant(await postJson(transport, "upload URL request", apiUrl, apiKey, body));
}

/**
 * Asks the API to verify and count the landed upload. Undefined when the server has no such
 * route (a server that predates it answers 404 without a reason, or `NO_SUCH_ROUTE`): it then
 * verifies uploads when it lists them.
 */
export async function requestCompletion(
  transport: Transport,
  completeUrl: string,
  apiKey: string,
  body: UploadCompleteRequestBody,
): Promise<UploadCompleteResponseBody | undefined> {
  try {
    const entry = (await postJson(
      transport,
      "upload completion",
      completeUrl,
      apiKey,
      body,
    )) as Partial<UploadCompleteResponseBody> | null;
    if (typeof entry?.size !== "number") {
      throw new StowageError("INTERNAL", "the completion response lacks the upload's size", {
        reason: "INVALID_COMPLETION",
      });
    }
    return entry as UploadCompleteResponseBody;
  } catch (err) {
    const unsupported =
      err instanceof RequestFailure &&
      err.status === 404 &&
      (err.error.reason === undefined || err.error.reason === "NO_SUCH_ROUTE");
    if (unsupported) return undefined;
    throw err;
  }
}

/**
 * PUTs the first `size` bytes of an open file to the granted URL with exactly the granted headers
 * (the signature binds them, anything else would be refused), streamed from disk: through
 * node:http with reused buffers, or through the caller's own `fetch` when it gave one.
 */
export async function putFile(
  transport: Transport,
  grant: UploadUrlResponseBody,
  file: { handle: FileHandle; size: number },
  listener: ProgressListener | undefined,
): Promise<void> {
  const response = await send(transport, "upload", transport.uploadTimeoutMs, (signal) => {
    if (!transport.customFetch) return httpPut(grant.url, grant.headers, file, listener, signal);
    const body = file.size === 0 ? new Uint8Array(0) : fileBody(file.handle, file.size, listener);
    // A stream body goes out with the signed content-length; undici needs duplex for it.
    return transport.fetch(grant.url, {
      method: "PUT",
      headers: grant.headers,
      body,
      duplex: "half",
      signal,
    } as RequestInit);
  });
  if (response.ok) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  throw await storageFailure(response);
}
