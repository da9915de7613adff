import type { Principal } from "@stowage/core";
import {
  createMemoryObjectStore,
  defineObjectStore,
  type ObjectStore,
  StowageError,
  type StowageErrorCode,
} from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createUploadService } from "../src/upload-service.js";
import type { SessionExists } from "../src/upload-service-types.js";
import { HOSTILE_FILENAMES } from "./support/filenames.js";

/**
 * A store with direct URLs whose every call fails with UNAVAILABLE: any other code below proves
 * the request was refused before any storage I/O.
 */
function unreachableStore(): ObjectStore {
  const down = async (): Promise<never> => {
    throw new StowageError("UNAVAILABLE", "storage is down");
  };
  return defineObjectStore({
    name: "unreachable",
    atomicCreateOnly: true,
    keepsContentType: true,
    put: down,
    get: down,
    stream: down,
    head: down,
    delete: down,
    list: down,
    createUploadUrl: down,
    createDownloadUrl: down,
  });
}

const store = unreachableStore();
const alice: Principal = { kind: "user", id: "alice" };
// Alice has s1; "broken" makes the app's callback answer something that is not a boolean.
const sessionExists: SessionExists = (principal, id) =>
  id === "broken" ? ("yes" as never) : principal.kind === "user" && principal.id === "alice" && id === "s1";
const uploads = createUploadService({ store, sessionExists });
const request = {
  principal: alice,
  sessionId: "s1",
  filename: "a.png",
  contentType: "image/png",
  fileSize: 10,
};

describe("createUploadService without storage", () => {
  it.each([
    ["no sessionExists", { store }],
    ["a sessionExists that is not a function", { store, sessionExists: true }],
    [
      "the former auth option (the caller authenticates now)",
      { store, auth: { authenticate: () => null, sessionExists } },
    ],
    ["a clock that is not a function", { store, sessionExists, now: 5 }],
    ["no store", { sessionExists }],
    ["a store without direct uploads", { store: createMemoryObjectStore(), sessionExists }],
    ["an upload lifetime of 0", { store, sessionExists, uploadExpiresInSeconds: 0 }],
    ["a download lifetime over 7 days", { store, sessionExists, downloadExpiresInSeconds: 8 * 86_400 }],
  ])("rejects %s", async (_why, options) => {
    await expectStowageError(() => createUploadService(options as never), "INVALID_INPUT");
  });

  it("checks the request before any storage I/O", async () => {
    await expectStowageError(() => uploads.requestUpload(request), "UNAVAILABLE");
    for (const { value } of HOSTILE_FILENAMES) {
      await expectStowageError(
        () => uploads.requestUpload({ ...request, filename: value as string }),
        "INVALID_INPUT",
        "INVALID_FILENAME",
      );
    }
    const refusals: [Record<string, unknown>, StowageErrorCode, string?][] = [
      [{ contentType: "text/html" }, "INVALID_INPUT", "CONTENT_TYPE_MISMATCH"],
      [{ fileSize: 51 * 1024 * 1024 }, "TOO_LARGE", "FILE_TOO_LARGE"],
      [{ fileSize: -1 }, "INVALID_INPUT", "INVALID_FILE_SIZE"],
      [{ sha256: "abc" }, "INVALID_INPUT"],
      [{ sessionId: "../s1" }, "INVALID_INPUT"],
      [{ sessionId: "%2e%2e" }, "INVALID_INPUT"],
      // Unknown and someone else's look the same: 404, never 403.
      [{ sessionId: "s2" }, "NOT_FOUND", "SESSION_NOT_FOUND"],
      [{ principal: { kind: "user", id: "bob" } }, "NOT_FOUND", "SESSION_NOT_FOUND"],
      [{ principal: { kind: "org", id: "alice" } }, "NOT_FOUND", "SESSION_NOT_FOUND"],
      [{ principal: undefined }, "UNAUTHORIZED"],
      [{ principal: { kind: "user", id: "../alice" } }, "INVALID_INPUT"],
      [{ sessionId: "broken" }, "INTERNAL"],
    ];
    for (const [change, code, reason] of refusals) {
      await expectStowageError(() => uploads.requestUpload({ ...request, ...change } as never), code, reason);
    }
    await expectStowageError(() => uploads.requestUpload(null as never), "INVALID_INPUT");
    await expectStowageError(() => uploads.requestDownload(alice, "s1", "../x.png"), "INVALID_INPUT");
    await expectStowageError(() => uploads.completeUpload(alice, "s1", "../x.png"), "INVALID_INPUT");
    const bob = { kind: "user", id: "bob" } as const;
    await expectStowageError(() => uploads.listUploads(bob, "s1"), "NOT_FOUND", "SESSION_NOT_FOUND");
    await expectStowageError(() => uploads.usage(bob, "s1"), "NOT_FOUND", "SESSION_NOT_FOUND");
    await expectStowageError(
      () => uploads.completeUpload(bob, "s1", "a.png"),
      "NOT_FOUND",
      "SESSION_NOT_FOUND",
    );
    await expectStowageError(
      () => uploads.requestDownload(bob, "s1", "a.png"),
      "NOT_FOUND",
      "SESSION_NOT_FOUND",
    );
    await expectStowageError(() => uploads.deleteSessionUploads(bob, "../s1"), "INVALID_INPUT");
    await expectStowageError(
      () => uploads.deleteSessionUploads({ kind: "team" } as never, "s1"),
      "INVALID_INPUT",
    );
    for (const bad of [{}, { olderThanDays: 0 }, { olderThanDays: -1 }, { olderThanDays: Number.NaN }]) {
      await expectStowageError(() => uploads.sweepUploads(bad as never), "INVALID_INPUT");
    }
    await expectStowageError(
      () => uploads.sweepUploads({ olderThanDays: 1, dryRun: "yes" as never }),
      "INVALID_INPUT",
    );
    await expectStowageError(
      () => uploads.sweepUploads({ olderThanDays: 1, now: new Date(Number.NaN) }),
      "INVALID_INPUT",
    );
  });

  it("never authenticates: it acts for the principal its caller passes, UNAUTHORIZED without one", async () => {
    expect(Object.keys(uploads)).not.toContain("authenticate");
    expect(Object.keys(uploads)).not.toContain("handleUploadRequest");
    for (const missing of [undefined, null]) {
      const principal = missing as never;
      await expectStowageError(() => uploads.completeUpload(principal, "s1", "a.png"), "UNAUTHORIZED");
      await expectStowageError(() => uploads.listUploads(principal, "s1"), "UNAUTHORIZED");
      await expectStowageError(() => uploads.requestDownload(principal, "s1", "a.png"), "UNAUTHORIZED");
      await expectStowageError(() => uploads.usage(principal, "s1"), "UNAUTHORIZED");
    }
  });

  it("an aborted signal stops a request before storage", async () => {
    const controller = new AbortController();
    controller.abort();
    await expectStowageError(() => uploads.requestUpload(request, { signal: controller.signal }), "ABORTED");
  });
});
