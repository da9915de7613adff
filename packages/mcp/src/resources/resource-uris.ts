import { assertSafeId, describeValue, isSha256Hex, parseBlobRef, StowageError } from "@stowage/core";

/** `thread://<alias>`: a thread of the session's job. */
export const THREAD_SCHEME = "thread://";
/** `content-ref://<sha256>`: a content ref of the hot-state registry. */
export const CONTENT_REF_SCHEME = "content-ref://";
/** `hot-state://latest`, `hot-state://<version>`: the session's stored hot state. */
export const HOT_STATE_SCHEME = "hot-state://";
/** `blob:sha256:<hex>`: a content-addressed blob. */
export const BLOB_SCHEME = "blob:sha256:";

/** Longest resource URI accepted, in characters (the same as an internal URL). */
const MAX_RESOURCE_URI_LENGTH = 8192;

/** A resource URI, parsed by hand: never through `URL`, which resolves `..` and decodes `%2e%2e`. */
export type ResourceUri =
  | { kind: "artifact" | "agent"; url: string; offset?: number; limit?: number; charOffset?: number }
  | { kind: "blob"; hash: string }
  | { kind: "thread"; alias: string; cursor?: string; limit?: number }
  | { kind: "content-ref"; id: string }
  | { kind: "hot-state"; version: "latest" | number };

function invalid(message: string, reason = "INVALID_URL"): StowageError {
  return new StowageError("INVALID_INPUT", message, { reason });
}

function integerParam(name: string, value: string, uri: string): number {
  if (!/^\d{1,15}$/.test(value)) {
    throw invalid(
      `${name} must be a non-negative integer, got ${describeValue(value)} in ${describeValue(uri)}`,
      "INVALID_READ_OPTION",
    );
  }
  return Number(value);
}

/**
 * Splits `?offset=&limit=&char_offset=` (and, for threads, `cursor=`) off a URI. Other parameters stay in the
 * URI, in order, for the router to judge: `agent://x?q=…` keeps its query, and anything else on
 * `artifact://` is refused there exactly as the HTTP API refuses it.
 */
function splitParams(uri: string, names: readonly string[]) {
  const question = uri.indexOf("?");
  if (question === -1) return { base: uri, params: new Map<string, string>() };
  const kept: string[] = [];
  const params = new Map<string, string>();
  for (const part of uri.slice(question + 1).split("&")) {
    const equals = part.indexOf("=");
    const name = equals === -1 ? part : part.slice(0, equals);
    if (!names.includes(name)) {
      kept.push(part);
      continue;
    }
    if (equals === -1 || params.has(name)) throw invalid(`bad or repeated ${name} in ${describeValue(uri)}`);
    params.set(name, part.slice(equals + 1));
  }
  const before = uri.slice(0, question);
  return { base: kept.length === 0 ? before : `${before}?${kept.join("&")}`, params };
}

/** Parses a resource URI of any kind this package serves; INVALID_INPUT for anything else. */
export function parseResourceUri(uri: unknown): ResourceUri {
  if (typeof uri !== "string") throw invalid(`resource URI must be a string, got ${describeValue(uri)}`);
  if (uri.length > MAX_RESOURCE_URI_LENGTH) {
    throw invalid(`resource URI must be at most ${MAX_RESOURCE_URI_LENGTH} characters, got ${uri.length}`);
  }
  if (uri.startsWith("artifact://") || uri.startsWith("agent://")) {
    const { base, params } = splitParams(uri, ["offset", "limit", "char_offset"]);
    const offset = params.get("offset");
    const limit = params.get("limit");
    const charOffset = params.get("char_offset");
    return {
      kind: uri.startsWith("artifact://") ? "artifact" : "agent",
      url: base,
      ...(offset === undefined ? {} : { offset: integerParam("offset", offset, uri) }),
      ...(limit === undefined ? {} : { limit: integerParam("limit", limit, uri) }),
      ...(charOffset === undefined ? {} : { charOffset: integerParam("char_offset", charOffset, uri) }),
    };
  }
  if (uri.startsWith(BLOB_SCHEME)) {
    const hash = parseBlobRef(uri);
    if (hash === null)
      throw invalid(
        `blob URI must be blob:sha256:<64 lowercase hex>, got ${describeValue(uri)}`,
        "INVALID_BLOB_REF",
      );
    return { kind: "blob", hash };
  }
  if (uri.startsWith(THREAD_SCHEME)) {
    const { base, params } = splitParams(uri, ["cursor", "limit"]);
    const alias = base.slice(THREAD_SCHEME.length);
    // The alias is a safe id: `/`, `?`, `%`, `..` and NUL never pass.
    assertSafeId(alias, "thread alias");
    const cursor = params.get("cursor");
    const limit = params.get("limit");
    return {
      kind: "thread",
      alias,
      ...(cursor === undefined ? {} : { cursor: decodeCursor(cursor, uri) }),
      ...(limit === undefined ? {} : { limit: integerParam("limit", limit, uri) }),
    };
  }
  if (uri.startsWith(CONTENT_REF_SCHEME)) {
    const id = uri.slice(CONTENT_REF_SCHEME.length);
    if (!isSha256Hex(id)) {
      throw invalid(
        `content-ref URI must be content-ref://<64 lowercase hex>, got ${describeValue(uri)}`,
        "INVALID_CONTENT_REF",
      );
    }
    return { kind: "content-ref", id };
  }
  if (uri.startsWith(HOT_STATE_SCHEME)) {
    const version = uri.slice(HOT_STATE_SCHEME.length);
    if (version === "latest") return { kind: "hot-state", version };
    if (!/^[1-9]\d{0,11}$/.test(version)) {
      throw invalid(
        `hot-state URI must be hot-state://latest or hot-state://<version>, got ${describeValue(uri)}`,
        "INVALID_HOT_STATE_VERSION",
      );
    }
    return { kind: "hot-state", version: Number(version) };
  }
  throw invalid(
    `resource URI must start with artifact://, agent://, ${BLOB_SCHEME}, ${THREAD_SCHEME}, ${CONTENT_REF_SCHEME} or ${HOT_STATE_SCHEME}, got ${describeValue(uri)}`,
  );
}

function decodeCursor(cursor: string, uri: string): string {
  try {
    return decodeURIComponent(cursor);
  } catch {
    throw invalid(`malformed cursor in ${describeValue(uri)}`);
  }
}

/** `artifact://3?offset=101&limit=100`, `agent://x/a?char_offset=262144`: the URI of one read. */
export function readUri(url: string, next: { offset?: number; limit?: number; charOffset?: number }): string {
  const params = [
    ...(next.offset === undefined ? [] : [`offset=${next.offset}`]),
    ...(next.limit === undefined ? [] : [`limit=${next.limit}`]),
    ...(next.charOffset === undefined ? [] : [`char_offset=${next.charOffset}`]),
  ];
  if (params.length === 0) return url;
  return `${url}${url.includes("?") ? "&" : "?"}${params.join("&")}`;
}
