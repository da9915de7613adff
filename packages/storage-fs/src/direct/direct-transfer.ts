import {
  type DirectDownloadRequest,
  type DirectUploadRequest,
  describeValue,
  errorResponse,
  type ObjectStore,
  type OperationOptions,
  type SignedRequest,
  StowageError,
} from "@stowage/core";
import { type DownloadPresentation, downloadHeaders } from "./content-types.js";
import {
  forbidden,
  MIN_SIGNING_SECRET_BYTES,
  type SignedFields,
  sign,
  signatureMatches,
} from "./signature.js";
import { formatSignedUrl, parseBaseUrl, parseSignedUrl } from "./signed-url.js";
import { verifiedBody } from "./verified-body.js";
import { withoutRoot } from "./without-root.js";

export interface FsDirectUrlOptions {
  /**
   * Public URL where the app mounts `handleDirectRequest`, e.g. `http://127.0.0.1:8787/direct`.
   * Sign with the address uploaders will reach.
   */
  baseUrl: string;
  /** HMAC-SHA256 key, at least 32 bytes; keep it secret and stable. */
  secret: string | Uint8Array;
  /**
   * Asked, with what its URL binds, before an upload through a signed URL is stored: resolve to
   * accept it, throw (a `StowageError`) to refuse it, e.g. because whoever handed the URL out has
   * revoked it since (the upload service's `checkDirectUpload`). Asked again once the whole body
   * has arrived, just before the file is published, and once more after: a refusal then removes
   * the file. Default: a validly signed URL is honoured until it expires.
   */
  checkUpload?: (upload: FsDirectUpload, options: OperationOptions) => Promise<void>;
  /**
   * Asked, with the key and expiry its URL binds, before a download (`GET`, `HEAD`) through a
   * signed URL is served: resolve to serve it, throw (a `StowageError`) to refuse it, e.g.
   * because the thing it names was deleted since (the upload service's `checkDirectDownload`).
   * Default: a validly signed URL is honoured until it expires.
   */
  checkDownload?: (download: FsDirectDownload, options: OperationOptions) => Promise<void>;
}

/** A download through a signed URL, as `checkDownload` is asked about it: what its URL binds. */
export interface FsDirectDownload {
  key: string;
  expiresAt: Date;
}

/** An upload through a signed URL, as `checkUpload` is asked about it: what its URL binds. */
export interface FsDirectUpload {
  key: string;
  contentType: string;
  contentLength: number;
  /** Hex SHA-256 the URL binds, if it binds one. */
  sha256?: string;
  expiresAt: Date;
}

/** The header carrying the hex SHA-256 of an upload, when its URL binds one. */
export const SHA256_HEADER = "x-stowage-sha256";

export interface DirectTransfer {
  createUploadUrl(request: DirectUploadRequest): Promise<SignedRequest>;
  createDownloadUrl(request: DirectDownloadRequest): Promise<SignedRequest>;
  handleDirectRequest(request: Request): Promise<Response>;
}

function secretBytes(value: unknown): Uint8Array {
  const bytes = typeof value === "string" ? new TextEncoder().encode(value) : value;
  if (!(bytes instanceof Uint8Array) || bytes.byteLength < MIN_SIGNING_SECRET_BYTES) {
    throw new StowageError(
      "INVALID_INPUT",
      `directUrls.secret must be at least ${MIN_SIGNING_SECRET_BYTES} bytes (a string or Uint8Array)`,
      { details: { limit: MIN_SIGNING_SECRET_BYTES } },
    );
  }
  return bytes;
}

/**
 * Signed direct-transfer URLs for an fs store, served by the host app through
 * `handleDirectRequest`. Requests arrive already validated by `defineObjectStore`. Errors are
 * answered without `root`, the store's directory: clients see keys, never server paths.
 */
export function createDirectTransfer(
  store: ObjectStore,
  options: FsDirectUrlOptions,
  root: string,
): DirectTransfer {
  const base = parseBaseUrl(options?.baseUrl);
  const secret = secretBytes(options?.secret);
  const { checkUpload, checkDownload } = options;
  for (const [name, check] of Object.entries({ checkUpload, checkDownload })) {
    if (check !== undefined && typeof check !== "function") {
      throw new StowageError(
        "INVALID_INPUT",
        `directUrls.${name} must be a function, got ${describeValue(check)}`,
      );
    }
  }

  const urlFor = (fields: SignedFields) => formatSignedUrl(base, fields, sign(secret, fields));
  const expiry = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

  async function handleDirectRequest(request: Request): Promise<Response> {
    try {
      const method = request.method === "HEAD" ? "GET" : request.method;
      if (method !== "PUT" && method !== "GET") {
        return errorResponse(new StowageError("INVALID_INPUT", `method ${request.method} is not allowed`));
      }
      const { fields, signature } = parseSignedUrl(base, new URL(request.url), method);
      if (!signatureMatches(secret, fields, signature)) {
        throw forbidden("signature does not match the request", "SIGNATURE_MISMATCH");
      }
      if (fields.expires * 1000 < Date.now()) {
        throw new StowageError("EXPIRED", "signed URL has expired", {
          details: { expiredAt: fields.expires },
        });
      }
      if (method === "GET") {
        const expiresAt = new Date(fields.expires * 1000);
        await checkDownload?.({ key: fields.key, expiresAt }, { signal: request.signal });
        return await download(fields.key, fields, request.method === "HEAD");
      }
      return await upload(fields.key, fields, request);
    } catch (err) {
      return errorResponse(withoutRoot(err, root));
    }
  }

  async function upload(key: string, fields: SignedFields, request: Request): Promise<Response> {
    const { length, type, sha256 } = fields;
    if (length === undefined || type === undefined)
      throw forbidden("upload URL is incomplete", "MALFORMED_URL");
    if (request.headers.get("content-type") !== type) {
      throw forbidden(`content-type must be the signed ${JSON.stringify(type)}`, "CONTENT_TYPE_MISMATCH");
    }
    if (request.headers.get("content-length") !== String(length)) {
      throw forbidden(`content-length must be the signed ${length}`, "LENGTH_MISMATCH");
    }
    if (sha256 !== undefined && request.headers.get(SHA256_HEADER) !== sha256) {
      throw forbidden(`${SHA256_HEADER} must be the signed hash`, "CHECKSUM_MISMATCH");
    }
    const upload: FsDirectUpload = {
      key,
      contentType: type,
      contentLength: length,
      ...(sha256 === undefined ? {} : { sha256 }),
      expiresAt: new Date(fields.expires * 1000),
    };
    const check = checkUpload && (() => checkUpload(upload, { signal: request.signal }));
    await check?.();
    const stored = await store.put(key, verifiedBody(request.body, length, sha256, check), {
      contentType: type,
    });
    try {
      // Revoked while the file was renamed into place: a listing may have passed it already.
      await check?.();
    } catch (err) {
      await store.delete(key);
      throw err;
    }
    return Response.json({ key: stored.key, size: stored.size }, { status: 200 });
  }

  async function download(
    key: string,
    presentation: DownloadPresentation,
    headOnly: boolean,
  ): Promise<Response> {
    const info = await store.head(key);
    const body = info && !headOnly ? await store.stream(key) : null;
    if (!info || (!headOnly && !body))
      throw new StowageError("NOT_FOUND", `${describeValue(key)} does not exist`);
    return new Response(body, {
      status: 200,
      headers: {
        ...downloadHeaders(key, presentation),
        "content-length": String(info.size),
        "x-content-type-options": "nosniff",
        "last-modified": info.lastModified.toUTCString(),
      },
    });
  }

  return {
    async createUploadUrl(request) {
      const fields: SignedFields = {
        method: "PUT",
        key: request.key,
        expires: expiry(request.expiresInSeconds),
        length: request.contentLength,
        type: request.contentType,
        ...(request.sha256 === undefined ? {} : { sha256: request.sha256 }),
      };
      return {
        method: "PUT",
        url: urlFor(fields),
        headers: {
          "content-type": request.contentType,
          "content-length": String(request.contentLength),
          ...(fields.sha256 === undefined ? {} : { [SHA256_HEADER]: fields.sha256 }),
        },
        expiresAt: new Date(fields.expires * 1000),
      };
    },
    async createDownloadUrl(request) {
      const fields: SignedFields = {
        method: "GET",
        key: request.key,
        expires: expiry(request.expiresInSeconds),
        ...(request.disposition === undefined ? {} : { disposition: request.disposition }),
        ...(request.filename === undefined ? {} : { filename: request.filename }),
      };
      return { method: "GET", url: urlFor(fields), headers: {}, expiresAt: new Date(fields.expires * 1000) };
    },
    handleDirectRequest,
  };
}
