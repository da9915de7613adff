import { describeValue, type Env, errorFromResponse, StowageError } from "@stowage/core";
import { UPLOAD_POLICY_PATH } from "../protocol.js";
import { createUploadPolicy, type UploadPolicy, uploadPolicyOptionsFromEnv } from "../upload-policy.js";

/** Time limit of the policy request in ms, when none is given: it runs once, when an agent starts. */
const DEFAULT_POLICY_TIMEOUT_MS = 10_000;

/** Options of {@link fetchUploadPolicy}. */
export interface FetchUploadPolicyOptions {
  /** The backend, e.g. `https://api.example.com/`; the request goes to `<apiBase>/agents/artifacts/policy`. */
  apiBase: string;
  apiKey: string;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Time limit of the request in ms; default 10,000. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * The policy the server enforces, from `GET <apiBase>/agents/artifacts/policy` (a server that
 * mounts `handleUploadRequest` answers it). Throws the server's refusal as it came (core's wire
 * format; NOT_FOUND `NO_SUCH_ROUTE` from a server that predates the route), UNAVAILABLE when the
 * server cannot be reached in time, INTERNAL (`INVALID_UPLOAD_POLICY`) for a body that is not a
 * policy.
 */
export async function fetchUploadPolicy(options: FetchUploadPolicyOptions): Promise<UploadPolicy> {
  const { apiBase, apiKey, signal } = options;
  let url: URL;
  try {
    url = new URL(`${String(apiBase).replace(/\/+$/, "")}${UPLOAD_POLICY_PATH}`);
  } catch {
    throw new StowageError("INVALID_INPUT", `apiBase must be an http(s) URL, got ${describeValue(apiBase)}`);
  }
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_POLICY_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetchImpl(url, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (err) {
    if (signal?.aborted) throw new StowageError("ABORTED", "upload policy request aborted", { cause: err });
    throw new StowageError("UNAVAILABLE", `upload policy request failed: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (!response.ok) throw await errorFromResponse(response, "upload policy request failed");
  const body = (await response.json().catch(() => null)) as Partial<UploadPolicy> | null;
  const notAPolicy = (cause?: unknown) =>
    new StowageError("INTERNAL", "the upload policy response is not a policy", {
      reason: "INVALID_UPLOAD_POLICY",
      ...(cause === undefined ? {} : { cause }),
    });
  // Every field must come from the server: a missing one must not silently become a default.
  const fields = ["allowedTypes", "maxFileSizeBytes", "maxTotalSizeBytes", "maxFilenameBytes"] as const;
  if (typeof body !== "object" || body === null || fields.some((field) => body[field] === undefined)) {
    throw notAPolicy();
  }
  try {
    return createUploadPolicy(Object.fromEntries(fields.map((field) => [field, body[field]])));
  } catch (err) {
    throw notAPolicy(err);
  }
}

/**
 * The policy an agent checks against when it has no server's: the design document's defaults with
 * the sizes of `ARTIFACT_MAX_FILE_SIZE_MB` / `ARTIFACT_MAX_TOTAL_SIZE_MB` from `env` (set the
 * same values as the server's). A malformed value is INVALID_INPUT (`INVALID_SETTING`).
 */
export function localUploadPolicy(env: Env): UploadPolicy {
  return createUploadPolicy(uploadPolicyOptionsFromEnv(env));
}
