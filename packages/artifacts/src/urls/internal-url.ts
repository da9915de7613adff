import { describeValue, StowageError } from "@stowage/core";
import { assertAgentOutputId, assertArtifactId } from "../layout/names.js";

/** Longest internal URL accepted, in characters. */
export const MAX_INTERNAL_URL_LENGTH = 8192;

export const ARTIFACT_SCHEME = "artifact://";
export const AGENT_SCHEME = "agent://";

export type InternalUrl =
  | { scheme: "artifact"; id: string }
  | {
      scheme: "agent";
      id: string;
      /** Percent-decoded JSON path segments of `agent://<id>/a/b/0`. */
      path?: string[];
      /** The decoded `q` of `agent://<id>?q=.a.b[0]`. */
      query?: string;
    };

function invalid(message: string, reason = "INVALID_URL", details?: Record<string, unknown>): StowageError {
  return new StowageError("INVALID_INPUT", message, { reason, ...(details ? { details } : {}) });
}

function decode(part: string, url: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalid(
      `agent:// URL has a malformed percent-escape in ${describeValue(part)}: ${describeValue(url)}`,
    );
  }
}

function parseAgentUrl(url: string, rest: string): InternalUrl {
  if (rest.includes("#")) throw invalid(`agent:// URLs take no #fragment, got: ${describeValue(url)}`);
  const queryStart = rest.indexOf("?");
  const beforeQuery = queryStart === -1 ? rest : rest.slice(0, queryStart);
  const slash = beforeQuery.indexOf("/");
  const id = assertAgentOutputId(slash === -1 ? beforeQuery : beforeQuery.slice(0, slash));
  const result: { scheme: "agent"; id: string; path?: string[]; query?: string } = { scheme: "agent", id };
  if (slash !== -1) {
    const segments = beforeQuery.slice(slash + 1).split("/");
    if (segments.some((segment) => segment === "")) {
      throw invalid(`agent:// path must not have empty segments, got: ${describeValue(url)}`);
    }
    result.path = segments.map((segment) => decode(segment, url));
  }
  if (queryStart !== -1) {
    const params = rest.slice(queryStart + 1).split("&");
    let query: string | undefined;
    for (const param of params) {
      const equals = param.indexOf("=");
      const name = equals === -1 ? param : param.slice(0, equals);
      if (name !== "q" || equals === -1) {
        throw invalid(`agent:// URL accepts only one ?q=<query> parameter, got: ${describeValue(url)}`);
      }
      if (query !== undefined)
        throw invalid(`agent:// URL has more than one q parameter: ${describeValue(url)}`);
      query = decode(param.slice(equals + 1), url);
    }
    result.query = query!;
  }
  if (result.path && result.query !== undefined) {
    throw invalid(`agent:// path and query cannot be combined: ${describeValue(url)}`, "PATH_AND_QUERY");
  }
  return result;
}

/**
 * Parses `artifact://<id>` (numeric id only, nothing after it) and `agent://<id>[/a/b/0]` /
 * `agent://<id>?q=.a.b[0]`. Parsed by hand rather than with `URL`, which would resolve `..`
 * and decode `%2e%2e` before the id is checked. Anything else is INVALID_INPUT.
 */
export function parseInternalUrl(url: unknown): InternalUrl {
  if (typeof url !== "string") throw invalid(`internal URL must be a string, got ${describeValue(url)}`);
  if (url.length > MAX_INTERNAL_URL_LENGTH) {
    throw invalid(
      `internal URL must be at most ${MAX_INTERNAL_URL_LENGTH} characters, got ${url.length}`,
      "INVALID_URL",
      { limit: MAX_INTERNAL_URL_LENGTH },
    );
  }
  if (url.startsWith(ARTIFACT_SCHEME)) {
    return { scheme: "artifact", id: assertArtifactId(url.slice(ARTIFACT_SCHEME.length)) };
  }
  if (url.startsWith(AGENT_SCHEME)) return parseAgentUrl(url, url.slice(AGENT_SCHEME.length));
  throw invalid(
    `internal URL must start with ${ARTIFACT_SCHEME} or ${AGENT_SCHEME}, got: ${describeValue(url)}`,
  );
}

/** True for a string this package's router resolves (it may still be malformed). */
export function isInternalUrl(url: unknown): url is string {
  return typeof url === "string" && (url.startsWith(ARTIFACT_SCHEME) || url.startsWith(AGENT_SCHEME));
}
