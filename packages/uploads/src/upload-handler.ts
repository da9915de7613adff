import {
  assertPrincipal,
  consoleLogger,
  errorResponse,
  type Logger,
  type Principal,
  parseContentType,
  StowageError,
} from "@stowage/core";
import {
  type DownloadUrlResponseBody,
  MAX_UPLOAD_REQUEST_BODY_BYTES,
  UPLOAD_COMPLETE_PATH,
  UPLOAD_POLICY_PATH,
  UPLOAD_URL_PATH,
  type UploadCompleteResponseBody,
  type UploadListEntry,
  type UploadListResponseBody,
  type UploadPolicyResponseBody,
  type UploadUrlResponseBody,
} from "./protocol.js";
import type { UploadInfo, UploadService } from "./upload-service-types.js";

/** What the handler calls of the service. */
type UploadRoutes = Pick<
  UploadService,
  "requestUpload" | "completeUpload" | "listUploads" | "requestDownload" | "policy"
>;

/** What the caller of {@link handleUploadRequest} knows about the request. */
export interface UploadRequestContext {
  /**
   * Who is calling, as the caller's own authentication found it (an app's middleware: the
   * principal of the request's API key). Required: the handler never authenticates, and answers
   * UNAUTHORIZED without one.
   */
  principal: Principal;
  /** Where unexpected (INTERNAL) failures are reported; default core's `consoleLogger`. */
  logger?: Logger;
}

type Route =
  | { name: "upload-url"; method: "POST" }
  | { name: "complete"; method: "POST" }
  | { name: "policy"; method: "GET" }
  | { name: "list"; method: "GET"; sessionId: string }
  | { name: "download"; method: "GET"; sessionId: string; filename: string };

const FIXED_ROUTES = [
  { segments: UPLOAD_URL_PATH.split("/"), route: { name: "upload-url", method: "POST" } },
  { segments: UPLOAD_COMPLETE_PATH.split("/"), route: { name: "complete", method: "POST" } },
  { segments: UPLOAD_POLICY_PATH.split("/"), route: { name: "policy", method: "GET" } },
] as const;

/** A path parameter, percent-decoded; a malformed escape is INVALID_INPUT. */
function decodeSegment(segment: string, what: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new StowageError("INVALID_INPUT", `${what} in the path is not valid percent-encoding`, {
      reason: "INVALID_PATH",
    });
  }
}

/**
 * The route of a path, or undefined. `artifacts` in the paths is the design document's wire
 * name: `/agents/artifacts/upload-url`, `/agents/{sessionId}/artifacts[/{filename}/download]`;
 * `/agents/artifacts/complete` and `/agents/artifacts/policy` are Stowage's additions beside them.
 */
function routeOf(pathname: string): Route | undefined {
  const segments = pathname.split("/");
  for (const fixed of FIXED_ROUTES) {
    if (segments.length === fixed.segments.length && segments.every((s, i) => s === fixed.segments[i])) {
      return fixed.route;
    }
  }
  const [root, agents, sessionId, folder, filename, download] = segments;
  if (root !== "" || agents !== "agents" || !sessionId || folder !== "artifacts") return undefined;
  if (segments.length === 4) {
    return { name: "list", method: "GET", sessionId: decodeSegment(sessionId, "sessionId") };
  }
  if (segments.length === 6 && filename && download === "download") {
    return {
      name: "download",
      method: "GET",
      sessionId: decodeSegment(sessionId, "sessionId"),
      filename: decodeSegment(filename, "filename"),
    };
  }
  return undefined;
}

/** The request's body as a JSON object, read up to {@link MAX_UPLOAD_REQUEST_BODY_BYTES}. */
async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  const type = parseContentType(request.headers.get("content-type"));
  if (type?.essence !== "application/json") {
    throw new StowageError("INVALID_INPUT", "the body must be JSON, sent as content-type application/json", {
      reason: "INVALID_BODY",
    });
  }
  const tooLarge = () =>
    new StowageError("TOO_LARGE", `the body is larger than ${MAX_UPLOAD_REQUEST_BODY_BYTES} bytes`, {
      reason: "BODY_TOO_LARGE",
      details: { limit: MAX_UPLOAD_REQUEST_BODY_BYTES },
    });
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > MAX_UPLOAD_REQUEST_BODY_BYTES) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  try {
    for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader!.read()) {
      size += chunk.value.byteLength;
      if (size > MAX_UPLOAD_REQUEST_BODY_BYTES) throw tooLarge();
      chunks.push(chunk.value);
    }
  } finally {
    // Stops the rest of an oversized body from being read at all.
    reader?.cancel().catch(() => {});
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks)));
  } catch {
    body = undefined;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new StowageError("INVALID_INPUT", "the body must be a JSON object", { reason: "INVALID_BODY" });
  }
  return body as Record<string, unknown>;
}

/** A JSON answer that no cache keeps: it carries signed URLs. */
function json(
  body:
    | UploadUrlResponseBody
    | UploadCompleteResponseBody
    | UploadListResponseBody
    | DownloadUrlResponseBody
    | UploadPolicyResponseBody,
): Response {
  return Response.json(body, { headers: { "cache-control": "no-store" } });
}

/** An upload as the wire carries it: an ISO date. */
function entryOf(upload: UploadInfo): UploadListEntry {
  const { expiresAt, ...rest } = upload;
  return {
    ...rest,
    lastModified: upload.lastModified.toISOString(),
    ...(expiresAt === undefined ? {} : { expiresAt: expiresAt.toISOString() }),
  };
}

/** The principal the caller authenticated: UNAUTHORIZED without one, INTERNAL for a malformed one. */
function principalOf(context: UploadRequestContext | undefined): Principal {
  const given = context?.principal;
  if (given === undefined || given === null) {
    throw new StowageError("UNAUTHORIZED", "the request was not authenticated");
  }
  try {
    assertPrincipal(given);
  } catch (err) {
    // The caller passed something that is not a principal: its bug, not the client's.
    throw new StowageError("INTERNAL", "handleUploadRequest: context.principal is not a principal", {
      cause: err,
    });
  }
  return { kind: given.kind, id: given.id };
}

async function answer(
  routes: UploadRoutes,
  request: Request,
  context: UploadRequestContext | undefined,
): Promise<Response> {
  const route = routeOf(new URL(request.url).pathname);
  if (!route) {
    throw new StowageError("NOT_FOUND", "no such upload API route", { reason: "NO_SUCH_ROUTE" });
  }
  if (request.method !== route.method) {
    throw new StowageError("INVALID_INPUT", `use ${route.method} on this route, not ${request.method}`, {
      reason: "METHOD_NOT_ALLOWED",
      details: { allow: route.method },
    });
  }
  const options = { signal: request.signal };
  const principal = principalOf(context);
  switch (route.name) {
    case "upload-url": {
      const body = await readJsonObject(request);
      const grant = await routes.requestUpload(
        {
          principal,
          sessionId: body.agentSessionId as string,
          filename: body.filename as string,
          contentType: body.contentType as string,
          fileSize: body.fileSize as number,
          ...(body.sha256 === undefined ? {} : { sha256: body.sha256 as string }),
        },
        options,
      );
      return json({ url: grant.url, key: grant.key, expiresIn: grant.expiresIn, headers: grant.headers });
    }
    case "complete": {
      const body = await readJsonObject(request);
      const upload = await routes.completeUpload(
        principal,
        body.agentSessionId as string,
        body.filename as string,
        options,
      );
      return json(entryOf(upload));
    }
    case "list": {
      const uploads = await routes.listUploads(principal, route.sessionId, options);
      // `{ "artifacts": [...] }`: the design document's wire name for the listing.
      return json({ artifacts: uploads.map(entryOf) });
    }
    case "download":
      return json(await routes.requestDownload(principal, route.sessionId, route.filename, options));
    case "policy": {
      const { allowedTypes, maxFileSizeBytes, maxTotalSizeBytes, maxFilenameBytes } = routes.policy;
      const types = Object.fromEntries(Object.entries(allowedTypes).map(([ext, list]) => [ext, [...list]]));
      return json({ allowedTypes: types, maxFileSizeBytes, maxTotalSizeBytes, maxFilenameBytes });
    }
  }
}

/**
 * The upload API over HTTP for `service` (paths as the design document names them), a
 * fetch-style handler: `POST /agents/artifacts/upload-url`, `POST /agents/artifacts/complete` and
 * `GET /agents/artifacts/policy` (Stowage's additions), `GET /agents/{sessionId}/artifacts`,
 * `GET /agents/{sessionId}/artifacts/{filename}/download`; JSON bodies, errors in core's wire
 * format (`errorResponse`). Mount it at `/agents/*`, after your own authentication: it acts for
 * `context.principal` and reads no Authorization header. Never throws.
 */
export async function handleUploadRequest(
  service: UploadService,
  request: Request,
  context: UploadRequestContext,
): Promise<Response> {
  try {
    return await answer(service, request, context);
  } catch (err) {
    if (!StowageError.is(err) || err.code === "INTERNAL") {
      (context?.logger ?? consoleLogger).warn(
        {
          method: request.method,
          url: request.url,
          error: err instanceof Error ? (err.stack ?? err.message) : String(err),
        },
        "upload request failed unexpectedly",
      );
    }
    const response = errorResponse(err);
    if (StowageError.is(err) && err.reason === "METHOD_NOT_ALLOWED") {
      response.headers.set("allow", String(err.details?.allow));
    }
    return response;
  }
}
