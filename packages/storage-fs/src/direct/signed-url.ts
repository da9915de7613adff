import { assertSafeKey, describeValue, pathSegmentProblem, StowageError } from "@stowage/core";
import { forbidden, type SignedFields } from "./signature.js";

/** Checks the `baseUrl` option: an http(s) URL without query or fragment, trailing slashes dropped. */
export function parseBaseUrl(value: unknown): URL {
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

/** The URL under `base` that carries `fields` and their `signature` in its query. */
export function formatSignedUrl(base: URL, fields: SignedFields, signature: string): string {
  const url = new URL(base.href);
  url.pathname = `${base.pathname}/${fields.key.split("/").map(encodeURIComponent).join("/")}`;
  const params = url.searchParams;
  params.set("expires", String(fields.expires));
  if (fields.length !== undefined) params.set("length", String(fields.length));
  if (fields.type !== undefined) params.set("type", fields.type);
  if (fields.sha256 !== undefined) params.set("sha256", fields.sha256);
  if (fields.disposition !== undefined) params.set("disposition", fields.disposition);
  if (fields.filename !== undefined) params.set("filename", fields.filename);
  params.set("signature", signature);
  return url.href;
}

function keyFromPath(base: URL, pathname: string): string {
  const prefix = `${base.pathname}/`;
  if (!pathname.startsWith(prefix)) throw new StowageError("NOT_FOUND", "not a direct-transfer URL");
  const decoded = pathname
    .slice(prefix.length)
    .split("/")
    .map((segment) => {
      let value: string;
      try {
        value = decodeURIComponent(segment);
      } catch {
        throw new StowageError("INVALID_INPUT", `malformed percent-encoding in ${describeValue(segment)}`);
      }
      const problem = pathSegmentProblem(value);
      if (problem)
        throw new StowageError("INVALID_INPUT", `key segment ${problem}, got ${describeValue(value)}`);
      return value;
    });
  const key = decoded.join("/");
  assertSafeKey(key);
  return key;
}

/** Reads a non-negative integer query parameter, or undefined when absent. */
function integerParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null) return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw forbidden(`signed URL has a malformed ${name}`, "MALFORMED_URL");
  return Number(raw);
}

function dispositionParam(params: URLSearchParams): "inline" | "attachment" | undefined {
  const raw = params.get("disposition");
  if (raw === null) return undefined;
  if (raw !== "inline" && raw !== "attachment") {
    throw forbidden("signed URL has a malformed disposition", "MALFORMED_URL");
  }
  return raw;
}

/**
 * The fields a request's URL claims were signed, and the signature it presents; the caller checks
 * one against the other. Fails on a path outside `base`, a hostile key or an unsigned URL.
 */
export function parseSignedUrl(
  base: URL,
  url: URL,
  method: "PUT" | "GET",
): { fields: SignedFields; signature: string } {
  const key = keyFromPath(base, url.pathname);
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
  } else {
    const disposition = dispositionParam(params);
    if (disposition !== undefined) fields.disposition = disposition;
    const filename = params.get("filename");
    if (filename !== null) fields.filename = filename;
  }
  return { fields, signature };
}
