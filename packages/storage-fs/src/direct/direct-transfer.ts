import { createHash } from "node:crypto";
import {
  assertSafeKey,
  assertSafePathSegment,
  type DirectDownloadRequest,
  type DirectUploadRequest,
  describeValue,
  HTTP_STATUS_BY_CODE,
  type ObjectStore,
  type SignedRequest,
  StowageError,
} from "@stowage/core";
import { downloadContentType } from "./content-types.js";
import { MIN_SIGNING_SECRET_BYTES, type SignedFields, sign, signatureMatches } from "./signature.js";

export interface FsDirectUrlOptions {
  /**
   * Public URL where the app mounts `handleDirectRequest`, e.g. `http://127.0.0.1:8787/direct`.
   * Sign with the address uploaders will reach.
   */
  baseUrl: string;
  /** HMAC-SHA256 key, at least {@link MIN_SIGNING_SECRET_BYTES} bytes; keep it secret and stable. */
  secret: string | Uint8Array;
}

/** The header carrying the hex SHA-256 of an upload, when its URL binds one. */
export const SHA256_HEADER = "x-stowage-sha256";

export interface DirectTransfer {
  createUploadUrl(request: DirectUploadRequest): Promise<SignedRequest>;
  createDownloadUrl(request: DirectDownloadRequest): Promise<SignedRequest>;
  handleDirectRequest(request: Request): Promise<Response>;
}

function parseBaseUrl(value: unknown): URL {
  let url: URL | undefined;
  try {
    url = typeof value === "string" ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash) {
    throw new StowageError(
      "INVALID_INPUT",
      `directUrls.baseUrl must be an http(s) URL without query or fragment, got ${describeValue(value)}`,
    );
  }
  url.pathname = url.pathname.replace(/\/+$/, "");
  return url;
}

function secretBytes(value: unknown): Uint8Array {
  const bytes = typeof value === "string" ? new TextEncoder().encode(value) : value;
  if (!(bytes instanceof Uint8Array) || bytes.byteLength < MIN_SIGNING_SECRET_BYTES) {
    throw new StowageError(
      "INVALID_INPUT",
      `directUrls.secret must be at least ${MIN_SIGNING_SECRET_BYTES} bytes (a string or Uint8Array)`,
    );
  }
  return bytes;
}

function errorResponse(err: unknown): Response {
  const error = StowageError.is(err)
    ? err
    : new StowageError("INTERNAL", "direct transfer failed", { cause: err });
  return Response.json({ error: error.toJSON() }, { status: HTTP_STATUS_BY_CODE[error.code] });
}

const forbidden = (message: string, reason: string) => new StowageError("FORBIDDEN", message, { reason });

/** Reads a non-negative integer query parameter, or undefined when absent. */
function integerParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null) return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw forbidden(`signed URL has a malformed ${name}`, "MALFORMED_URL");
  return Number(raw);
}

/**
 * Counts and hashes an upload as it streams; errors (so that nothing is published) when the body
 * is longer or shorter than signed, or does not hash to the signed SHA-256.
 */
function verifiedBody(
  body: ReadableStream<Uint8Array> | null,
  length: number,
  sha256: string | undefined,
): ReadableStream<Uint8Array> {
  const hash = createHash("sha256");
  let received = 0;
  const check = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      received += chunk.byteLength;
      if (received > length) {
        controller.error(forbidden(`upload is longer than the signed ${length} bytes`, "LENGTH_MISMATCH"));
        return;
      }
      hash.update(chunk);
      controller.enqueue(chunk);
    },
    flush(controller) {
      if (received !== length) {
        controller.error(
          forbidden(`upload has ${received} bytes, the URL was signed for ${length}`, "LENGTH_MISMATCH"),
        );
        return;
      }
      const actual = hash.digest("hex");
      if (sha256 !== undefined && actual !== sha256) {
        controller.error(
          new StowageError("INTEGRITY", `upload hashes to ${actual}, the URL was signed for ${sha256}`, {
            details: { expected: sha256, actual },
          }),
        );
      }
    },
  });
  return (body ?? new ReadableStream({ start: (c) => c.close() })).pipeThrough(check);
}

/**
 * Signed direct-transfer URLs for an fs store, served by the host app through
 * `handleDirectRequest`. Requests arrive already validated by `defineObjectStore`.
 */
export function createDirectTransfer(store: ObjectStore, options: FsDirectUrlOptions): DirectTransfer {
  const base = parseBaseUrl(options?.baseUrl);
  const secret = secretBytes(options?.secret);

  const urlFor = (fields: SignedFields): string => {
    const url = new URL(base.href);
    url.pathname = `${base.pathname}/${fields.key.split("/").map(encodeURIComponent).join("/")}`;
    url.searchParams.set("expires", String(fields.expires));
    if (fields.length !== undefined) url.searchParams.set("length", String(fields.length));
    if (fields.type !== undefined) url.searchParams.set("type", fields.type);
    if (fields.sha256 !== undefined) url.searchParams.set("sha256", fields.sha256);
    url.searchParams.set("signature", sign(secret, fields));
    return url.href;
  };

  const expiry = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

  function keyFromPath(pathname: string): string {
    const prefix = `${base.pathname}/`;
    if (!pathname.startsWith(prefix)) throw new StowageError("NOT_FOUND", "not a direct-transfer URL");
    const segments = pathname.slice(prefix.length).split("/");
    const decoded = segments.map((segment) => {
      let value: string;
      try {
        value = decodeURIComponent(segment);
      } catch {
        throw new StowageError("INVALID_INPUT", `malformed percent-encoding in ${describeValue(segment)}`);
      }
      assertSafePathSegment(value, "key segment");
      return value;
    });
    const key = decoded.join("/");
    assertSafeKey(key);
    return key;
  }

  async function handleDirectRequest(request: Request): Promise<Response> {
    try {
      const url = new URL(request.url);
      const key = keyFromPath(url.pathname);
      const method = request.method === "HEAD" ? "GET" : request.method;
      if (method !== "PUT" && method !== "GET") {
        return errorResponse(new StowageError("INVALID_INPUT", `method ${request.method} is not allowed`));
      }
      const params = url.searchParams;
      const expires = integerParam(params, "expires");
      const signature = params.get("signature");
      if (expires === undefined || signature === null) throw forbidden("URL is not signed", "UNSIGNED");
      const fields: SignedFields = { method, key, expires };
      if (method === "PUT") {
        fields.length = integerParam(params, "length");
        fields.type = params.get("type") ?? undefined;
        const sha256 = params.get("sha256");
        if (sha256 !== null) fields.sha256 = sha256;
      }
      if (!signatureMatches(secret, fields, signature)) {
        throw forbidden("signature does not match the request", "SIGNATURE_MISMATCH");
      }
      if (expires * 1000 < Date.now()) {
        throw new StowageError("EXPIRED", "signed URL has expired", { details: { expiredAt: expires } });
      }
      if (method === "GET") return await download(key, request.method === "HEAD");
      return await upload(key, fields, request);
    } catch (err) {
      return errorResponse(err);
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
    const stored = await store.put(key, verifiedBody(request.body, length, sha256), { contentType: type });
    return Response.json({ key: stored.key, size: stored.size }, { status: 200 });
  }

  async function download(key: string, headOnly: boolean): Promise<Response> {
    const info = await store.head(key);
    const body = info && !headOnly ? await store.stream(key) : null;
    if (!info || (!headOnly && !body))
      throw new StowageError("NOT_FOUND", `${describeValue(key)} does not exist`);
    const { type, inline } = downloadContentType(key);
    const name = key.slice(key.lastIndexOf("/") + 1);
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": type,
        "content-length": String(info.size),
        "content-disposition": `${inline ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(name)}`,
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
      };
      return { method: "GET", url: urlFor(fields), headers: {}, expiresAt: new Date(fields.expires * 1000) };
    },
    handleDirectRequest,
  };
}
