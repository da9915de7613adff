import { randomBytes } from "node:crypto";
import { errorResponse, type Logger, type Principal, parseBearerToken, StowageError } from "@stowage/core";
import { handleUploadRequest, type UploadService } from "../../src/index.js";
import type { FetchHandler } from "./upload-server.js";

/**
 * API keys for the upload tests, standing in for an app's own authentication: the upload service
 * and its handler never authenticate, the caller does. Nothing of the real keys' format or storage
 * (those are `@stowage/tenancy`'s, tested there).
 */
export function createTestKeys() {
  const principals = new Map<string, Principal>();
  return {
    async issue(principal: Principal): Promise<{ apiKey: string }> {
      const apiKey = `test_${randomBytes(16).toString("base64url")}`;
      principals.set(apiKey, { kind: principal.kind, id: principal.id });
      return { apiKey };
    },
    /** The principal of an `Authorization: Bearer <key>` header; UNAUTHORIZED otherwise. */
    authenticate(authorization: string | null): Principal {
      const principal = principals.get(parseBearerToken(authorization));
      if (!principal) throw new StowageError("UNAUTHORIZED", "invalid or revoked API key");
      return principal;
    },
  };
}

export type TestKeys = ReturnType<typeof createTestKeys>;

/**
 * The upload API as an app mounts it: its middleware authenticates the request first (here with
 * `keys`) and answers a bad key itself (401), then the handler acts for the principal it found.
 */
export function mountUploadApi(uploads: UploadService, keys: TestKeys, logger?: Logger): FetchHandler {
  return async (request) => {
    let principal: Principal;
    try {
      principal = keys.authenticate(request.headers.get("authorization"));
    } catch (err) {
      return errorResponse(err);
    }
    return handleUploadRequest(uploads, request, { principal, ...(logger ? { logger } : {}) });
  };
}
