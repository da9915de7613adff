import type { S3Client } from "@aws-sdk/client-s3";
import {
  assertSha256Hex,
  describeValue,
  MAX_SIGNED_URL_SECONDS,
  type ObjectStore,
  type OperationOptions,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import { parseBearerToken } from "./api-keys.js";
import { assertArtifactFilename } from "./artifact-filename.js";
import {
  artifactKey,
  artifactsPrefix,
  assertArtifactId,
  assertPrincipal,
  type Principal,
  samePrincipal,
  sessionPrefix,
} from "./artifact-keys.js";
import { type ArtifactPolicy, checkArtifact, DEFAULT_ARTIFACT_POLICY } from "./artifact-policy.js";
import { formatSize } from "./format-size.js";
import {
  createMemoryQuotaLedger,
  type QuotaLedger,
  type QuotaUsage,
  usageSourceFromStore,
} from "./quota-ledger.js";
import { createS3ObjectStore, type S3DirectDownloadRequest } from "./s3-object-store.js";

/** Lifetime of an upload URL (15 minutes). */
export const ARTIFACT_UPLOAD_URL_SECONDS = 900;
/** Lifetime of a download URL (1 hour). */
export const ARTIFACT_DOWNLOAD_URL_SECONDS = 3600;

/** How the uploads learn who is calling and who owns a session. */
export interface ArtifactAuth {
  /** The principal of an API key (e.g. `createApiKeys().authenticate`); null when unknown or revoked. */
  authenticate(apiKey: string, options: OperationOptions): Promise<Principal | null> | Principal | null;
  /** The one user or org a session belongs to; null when there is no such session. */
  sessionOwner(sessionId: string, options: OperationOptions): Promise<Principal | null> | Principal | null;
}

export interface ArtifactUploadsOptions {
  /** The S3 client and bucket the artifacts live in (or give `store`). */
  client?: S3Client;
  bucket?: string;
  /** Prefix of every key in the bucket; default `""` (keys start at `sessions/`). */
  prefix?: string;
  /** Instead of `client` + `bucket`: any ObjectStore with direct upload and download URLs. */
  store?: ObjectStore;
  /** Default {@link DEFAULT_ARTIFACT_POLICY}. */
  policy?: ArtifactPolicy;
  /** Default: a {@link createMemoryQuotaLedger} (race-free within this process). */
  quota?: QuotaLedger;
  auth: ArtifactAuth;
  /** Upload URL lifetime; default {@link ARTIFACT_UPLOAD_URL_SECONDS}. */
  uploadExpiresInSeconds?: number;
  /** Download URL lifetime; default {@link ARTIFACT_DOWNLOAD_URL_SECONDS}. */
  downloadExpiresInSeconds?: number;
}

export interface UploadRequest {
  principal: Principal;
  sessionId: string;
  filename: string;
  contentType: string;
  fileSize: number;
  /** Hex SHA-256 of the file; when given, the URL binds it and the uploader must send it. */
  sha256?: string;
}

export interface UploadGrant {
  /** PUT the file here… */
  url: string;
  /** …with exactly these headers (content-type, content-length, and x-amz-checksum-sha256 when bound). */
  headers: Record<string, string>;
  /** The store key the file will have. */
  key: string;
  expiresIn: number;
}

export interface ArtifactInfo {
  filename: string;
  size: number;
  /** `1.0 MB`. */
  sizeFormatted: string;
  lastModified: Date;
}

export interface DownloadGrant {
  url: string;
  expiresIn: number;
}

export interface SessionUsage extends QuotaUsage {
  limitBytes: number;
}

export interface ArtifactUploads {
  readonly policy: ArtifactPolicy;
  readonly store: ObjectStore;
  /** The principal of an `Authorization: Bearer <key>` header; UNAUTHORIZED otherwise. */
  authenticate(authorization: string | undefined, options?: OperationOptions): Promise<Principal>;
  requestUpload(request: UploadRequest, options?: OperationOptions): Promise<UploadGrant>;
  listArtifacts(principal: Principal, sessionId: string, options?: OperationOptions): Promise<ArtifactInfo[]>;
  requestDownload(
    principal: Principal,
    sessionId: string,
    filename: string,
    options?: OperationOptions,
  ): Promise<DownloadGrant>;
  /** Bytes used and reserved in a session, against its limit. */
  usage(principal: Principal, sessionId: string, options?: OperationOptions): Promise<SessionUsage>;
}

function storeFrom(options: ArtifactUploadsOptions): ObjectStore {
  const { store, client, bucket, prefix } = options;
  if (store !== undefined) {
    if (client !== undefined || bucket !== undefined || prefix !== undefined) {
      throw new StowageError(
        "INVALID_INPUT",
        "createArtifactUploads: give either store, or client and bucket, not both",
      );
    }
    if (!store.capabilities?.directUpload || !store.capabilities.directDownload) {
      throw new StowageError(
        "INVALID_INPUT",
        `createArtifactUploads: store ${describeValue(store.name)} must support direct upload and download URLs`,
      );
    }
    return store;
  }
  if (client === undefined || bucket === undefined) {
    throw new StowageError(
      "INVALID_INPUT",
      "createArtifactUploads: client and bucket are required (or give store)",
    );
  }
  return createS3ObjectStore({ client, bucket, ...(prefix === undefined ? {} : { prefix }) });
}

function lifetime(what: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_SIGNED_URL_SECONDS) {
    throw new StowageError(
      "INVALID_INPUT",
      `createArtifactUploads: ${what} must be an integer from 1 to ${MAX_SIGNED_URL_SECONDS}, got ${describeValue(value)}`,
    );
  }
  return value;
}

/**
 * The backend side of presigned artifact uploads: checks the caller, the session's owner, the
 * file against the policy and the session's quota, then hands out a URL whose signature binds
 * size, type and checksum. The bytes go straight to storage.
 */
export function createArtifactUploads(options: ArtifactUploadsOptions): ArtifactUploads {
  if (typeof options?.auth?.authenticate !== "function" || typeof options.auth.sessionOwner !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      "createArtifactUploads: auth must have authenticate(apiKey) and sessionOwner(sessionId) functions",
    );
  }
  const store = storeFrom(options);
  const uploadSeconds = lifetime(
    "uploadExpiresInSeconds",
    options.uploadExpiresInSeconds,
    ARTIFACT_UPLOAD_URL_SECONDS,
  );
  const downloadSeconds = lifetime(
    "downloadExpiresInSeconds",
    options.downloadExpiresInSeconds,
    ARTIFACT_DOWNLOAD_URL_SECONDS,
  );
  const policy = options.policy ?? DEFAULT_ARTIFACT_POLICY;
  const quota = options.quota ?? createMemoryQuotaLedger();
  const { auth } = options;
  const createUploadUrl = store.createUploadUrl!;
  const createDownloadUrl = store.createDownloadUrl!;

  const source = usageSourceFromStore(store);

  /** The session's owner, after checking that `principal` is it. */
  async function authorize(principal: unknown, sessionId: unknown, signal?: AbortSignal): Promise<Principal> {
    if (principal === undefined || principal === null) {
      throw new StowageError("UNAUTHORIZED", "no authenticated principal; authenticate the API key first");
    }
    assertPrincipal(principal);
    assertArtifactId(sessionId, "sessionId");
    throwIfAborted(signal, "authorize");
    const owner = await auth.sessionOwner(sessionId, signal ? { signal } : {});
    if (owner !== null) {
      try {
        assertPrincipal(owner, "session owner");
      } catch (err) {
        throw new StowageError(
          "INTERNAL",
          `auth.sessionOwner returned an invalid owner for ${describeValue(sessionId)}`,
          {
            cause: err,
          },
        );
      }
    }
    // An unknown session and someone else's session look the same: no probing for session ids.
    if (owner === null || !samePrincipal(owner, principal)) {
      throw new StowageError(
        "FORBIDDEN",
        `${principal.kind} ${describeValue(principal.id)} may not access session ${describeValue(sessionId)}`,
        { reason: "NOT_SESSION_OWNER" },
      );
    }
    return owner;
  }

  const uploads: ArtifactUploads = {
    policy,
    store,

    async authenticate(authorization, { signal } = {}) {
      const apiKey = parseBearerToken(authorization);
      throwIfAborted(signal, "authenticate");
      const principal = await auth.authenticate(apiKey, signal ? { signal } : {});
      if (principal === null || principal === undefined) {
        throw new StowageError("UNAUTHORIZED", "invalid or revoked API key");
      }
      assertPrincipal(principal);
      return principal;
    },

    async requestUpload(request, { signal } = {}) {
      if (typeof request !== "object" || request === null) {
        throw new StowageError(
          "INVALID_INPUT",
          `upload request must be an object, got ${describeValue(request)}`,
        );
      }
      assertArtifactId(request.sessionId, "sessionId");
      const file = checkArtifact(policy, request);
      if (request.sha256 !== undefined) assertSha256Hex(request.sha256);
      const owner = await authorize(request.principal, request.sessionId, signal);
      const key = artifactKey(owner, request.sessionId, file.filename);
      const urlExpiresAt = new Date(Date.now() + uploadSeconds * 1000);
      const reservation = await quota.reserve(
        {
          scope: sessionPrefix(owner, request.sessionId),
          key,
          bytes: file.fileSize,
          limitBytes: policy.maxTotalSizeBytes,
          urlExpiresAt,
          source,
        },
        signal ? { signal } : {},
      );
      try {
        const signed = await createUploadUrl(
          {
            key,
            contentType: file.contentType,
            contentLength: file.fileSize,
            ...(request.sha256 === undefined ? {} : { sha256: request.sha256 }),
            expiresInSeconds: uploadSeconds,
          },
          signal ? { signal } : {},
        );
        return { url: signed.url, headers: signed.headers, key, expiresIn: uploadSeconds };
      } catch (err) {
        reservation.release();
        throw err;
      }
    },

    async listArtifacts(principal, sessionId, { signal } = {}) {
      const owner = await authorize(principal, sessionId, signal);
      const prefix = artifactsPrefix(owner, sessionId);
      const artifacts: ArtifactInfo[] = [];
      for await (const item of store.iterate({ prefix, ...(signal ? { signal } : {}) })) {
        const filename = item.key.slice(prefix.length);
        // Only direct children are artifacts; deeper keys were not written through this API.
        if (filename.includes("/")) continue;
        artifacts.push({
          filename,
          size: item.size,
          sizeFormatted: formatSize(item.size),
          lastModified: item.lastModified,
        });
      }
      return artifacts;
    },

    async requestDownload(principal, sessionId, filename, { signal } = {}) {
      assertArtifactFilename(filename, policy.maxFilenameBytes);
      const owner = await authorize(principal, sessionId, signal);
      const key = artifactKey(owner, sessionId, filename);
      const info = await store.head(key, signal ? { signal } : {});
      if (!info) {
        throw new StowageError(
          "NOT_FOUND",
          `artifact ${describeValue(filename)} does not exist in session ${describeValue(sessionId)}`,
        );
      }
      // Downloads are attachments: an uploaded .html must never render on the storage origin.
      const request: S3DirectDownloadRequest = {
        key,
        expiresInSeconds: downloadSeconds,
        attachmentFilename: filename,
      };
      const signed = await createDownloadUrl(request, signal ? { signal } : {});
      return { url: signed.url, expiresIn: downloadSeconds };
    },

    async usage(principal, sessionId, { signal } = {}) {
      const owner = await authorize(principal, sessionId, signal);
      const usage = await quota.usage(sessionPrefix(owner, sessionId), source, signal ? { signal } : {});
      return { ...usage, limitBytes: policy.maxTotalSizeBytes };
    },
  };
  return Object.freeze(uploads);
}
