import type { Principal } from "@stowage/core";
import { createFsObjectStore, type FsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { createUploadService, type UploadPolicy, type UploadService } from "../../src/index.js";
import { createTestKeys, mountUploadApi } from "./test-keys.js";
import { startFetchServer } from "./upload-server.js";

/**
 * The upload API on 127.0.0.1, as an app without S3 serves it: its own authentication, the
 * handler, and fs direct URLs.
 */
export interface UploadApi {
  /** The server's base URL, ending in `/`. */
  url: string;
  uploads: UploadService;
  store: FsObjectStore;
  /** A new API key of `principal`. */
  keyOf(principal: Principal): Promise<string>;
}

/**
 * Starts the upload API for one test file, closed after its tests. `sessions` are
 * `<kind>:<id>/<sessionId>` strings: which sessions each principal has; `policy` is the server's.
 */
export async function startUploadApi(
  sessions: Iterable<string>,
  options: { policy?: UploadPolicy } = {},
): Promise<UploadApi> {
  const known = new Set(sessions);
  const apiKeys = createTestKeys();
  let store: FsObjectStore | undefined;
  let uploads: UploadService | undefined;
  const server = await startFetchServer((request) =>
    new URL(request.url).pathname.startsWith("/direct/")
      ? store!.handleDirectRequest!(request)
      : mountUploadApi(uploads!, apiKeys)(request),
  );
  store = createFsObjectStore({
    root: await tempDirectory("stowage-upload-api-"),
    directUrls: { baseUrl: `${server.url}direct`, secret: "a test secret of at least 32 bytes!" },
  });
  uploads = createUploadService({
    store,
    ...(options.policy ? { policy: options.policy } : {}),
    sessionExists: (principal, id) => known.has(`${principal.kind}:${principal.id}/${id}`),
  });
  return {
    url: server.url,
    uploads,
    store,
    keyOf: async (principal) => (await apiKeys.issue(principal)).apiKey,
  };
}
