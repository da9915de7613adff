import { basename } from "node:path";
import { type Env, mapConcurrent, StowageError } from "@stowage/core";
import { agentUploadOptionsFromEnv } from "./agent-env.js";
import { readOptions } from "./read-options.js";
import {
  failureResult,
  type UploadFileOptions,
  type UploadFileResult,
  uploadConcurrency,
  uploadFile,
} from "./upload-file.js";
import { localUploadPolicy } from "./upload-policy-source.js";

/** Options of {@link uploadArtifact}: the design document's three, and optional overrides. */
export interface UploadArtifactOptions
  extends Partial<Omit<UploadFileOptions, "apiKey" | "sessionId" | "filePath">> {
  /** The session; default `AGENT_SESSION_ID`. */
  agentSessionId?: string | undefined;
  filePath: string;
  /** The API key; default `STOWAGE_API_KEY`, or `CONTINUE_API_KEY`. */
  accessToken?: string | undefined;
  /** The API base URL; default `STOWAGE_API_URL`, or `CONTINUE_API_BASE`. */
  apiBase?: string;
  /**
   * The policy checked locally before any request; default the design document's with the sizes
   * of `ARTIFACT_MAX_FILE_SIZE_MB` / `ARTIFACT_MAX_TOTAL_SIZE_MB` from `env` (the server's decides;
   * `loadUploadArtifactTool` fetches it).
   */
  policy?: UploadFileOptions["policy"];
  /** Where the defaults are read; default `process.env`. */
  env?: Env;
}

/** The {@link UploadFileOptions} the given options and the environment make; throws what to report. */
function resolve(options: UploadArtifactOptions): UploadFileOptions {
  const { agentSessionId, accessToken, env, filePath, ...rest } = readOptions(
    options,
    "uploadArtifact options",
  );
  const variables = env ?? process.env;
  const fromEnv = agentUploadOptionsFromEnv(variables);
  const missing = (names: string) =>
    new StowageError("INVALID_INPUT", `set ${names} in the environment, or pass it`, {
      reason: "MISSING_SETTING",
      details: { setting: names.split(" ")[0] },
    });
  const apiBase = rest.apiBase ?? fromEnv.apiBase;
  const apiKey = accessToken ?? fromEnv.apiKey;
  const sessionId = agentSessionId ?? fromEnv.sessionId;
  if (apiBase === undefined) throw missing("STOWAGE_API_URL (or CONTINUE_API_BASE)");
  if (apiKey === undefined) throw missing("STOWAGE_API_KEY (or CONTINUE_API_KEY)");
  if (sessionId === undefined) throw missing("AGENT_SESSION_ID");
  const policy = rest.policy ?? localUploadPolicy(variables);
  return { ...rest, apiBase, apiKey, sessionId, filePath: filePath as string, policy };
}

/**
 * The design document's client call: uploads one file to the agent session's storage and says
 * what happened, `{ success, filename, error? }` (plus `code`, `reason`, `key`, `size`, `sha256`,
 * `attempts`). Reads the API from `STOWAGE_API_URL`/`STOWAGE_API_KEY`/`AGENT_SESSION_ID` unless
 * given, accepting the document's `CONTINUE_API_BASE`/`CONTINUE_API_KEY` as aliases, and the
 * local policy's sizes from `ARTIFACT_MAX_*_SIZE_MB`. The file streams from disk. Never throws.
 */
export async function uploadArtifact(options: UploadArtifactOptions): Promise<UploadFileResult> {
  let resolved: UploadFileOptions;
  try {
    resolved = resolve(options);
  } catch (err) {
    let filename = "";
    try {
      const filePath = options?.filePath;
      filename = typeof filePath === "string" ? basename(filePath) : "";
    } catch {
      // Options that cannot be read name no file.
    }
    const error = StowageError.is(err) ? err : new StowageError("INVALID_INPUT", String(err));
    return failureResult(filename, error);
  }
  return uploadFile(resolved);
}

/**
 * The design document's batch call: one result per file, in order, 3 files at a time. Session
 * and key default to the environment as in {@link uploadArtifact}; `options` passes the rest.
 * Never throws.
 */
export async function uploadArtifacts(
  agentSessionId: string | undefined,
  filePaths: readonly string[],
  accessToken?: string,
  options: Omit<UploadArtifactOptions, "agentSessionId" | "filePath" | "accessToken"> & {
    concurrency?: number;
  } = {},
): Promise<UploadFileResult[]> {
  if (!Array.isArray(filePaths)) {
    return [failureResult("", new StowageError("INVALID_INPUT", "filePaths must be an array"))];
  }
  let given: typeof options;
  try {
    given = readOptions(options, "uploadArtifacts options");
  } catch (err) {
    return [failureResult("", err as StowageError)];
  }
  const { concurrency, ...shared } = given;
  // uploadArtifact never throws, so every file gets its own result.
  return mapConcurrent(filePaths, uploadConcurrency(concurrency), (filePath) =>
    uploadArtifact({ ...shared, agentSessionId, accessToken, filePath }),
  );
}
