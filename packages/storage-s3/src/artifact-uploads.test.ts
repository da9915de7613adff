import { createMemoryObjectStore, StowageError, type StowageErrorCode } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { HOSTILE_FILENAMES } from "../test/support/filenames.js";
import type { Principal } from "./artifact-keys.js";
import { type ArtifactAuth, createArtifactUploads } from "./artifact-uploads.js";
import { createS3Client } from "./s3-client.js";
import { createS3ObjectStore } from "./s3-object-store.js";

// Nothing listens on port 9: whatever reaches storage fails with UNAVAILABLE, so every other
// code below proves the request was refused before any I/O.
const client = createS3Client({ endpoint: "http://127.0.0.1:9", accessKeyId: "a", secretAccessKey: "b" });
const alice: Principal = { kind: "user", id: "alice" };
const auth: ArtifactAuth = {
  authenticate: (key) => (key === "good" ? alice : null),
  sessionOwner: (id) => (id === "s1" ? alice : id === "broken" ? ({ kind: "team", id: "x" } as never) : null),
};
const uploads = createArtifactUploads({ client, bucket: "b", auth });
const request = {
  principal: alice,
  sessionId: "s1",
  filename: "a.png",
  contentType: "image/png",
  fileSize: 10,
};

async function codeOf(action: () => unknown): Promise<StowageErrorCode | "success"> {
  try {
    await action();
    return "success";
  } catch (err) {
    if (StowageError.is(err)) return err.code;
    throw err;
  }
}

describe("createArtifactUploads without a server", () => {
  it.each([
    ["no auth", { client, bucket: "b" }],
    ["auth without sessionOwner", { client, bucket: "b", auth: { authenticate: () => null } }],
    ["no client or store", { auth }],
    ["a client without bucket", { client, auth }],
    [
      "both store and client",
      { client, bucket: "b", store: createS3ObjectStore({ client, bucket: "b" }), auth },
    ],
    ["a store without direct uploads", { store: createMemoryObjectStore(), auth }],
    ["an upload lifetime of 0", { client, bucket: "b", auth, uploadExpiresInSeconds: 0 }],
    ["a download lifetime over 7 days", { client, bucket: "b", auth, downloadExpiresInSeconds: 8 * 86_400 }],
  ])("rejects %s", async (_why, options) => {
    expect(await codeOf(() => createArtifactUploads(options as never))).toBe("INVALID_INPUT");
  });

  it("checks the request before any storage I/O", async () => {
    expect(await codeOf(() => uploads.requestUpload(request))).toBe("UNAVAILABLE");
    for (const { value } of HOSTILE_FILENAMES) {
      expect(await codeOf(() => uploads.requestUpload({ ...request, filename: value as string }))).toBe(
        "INVALID_INPUT",
      );
    }
    const refusals: [Partial<typeof request> | Record<string, unknown>, StowageErrorCode][] = [
      [{ contentType: "text/html" }, "INVALID_INPUT"],
      [{ fileSize: 51 * 1024 * 1024 }, "TOO_LARGE"],
      [{ fileSize: -1 }, "INVALID_INPUT"],
      [{ sha256: "abc" }, "INVALID_INPUT"],
      [{ sessionId: "../s1" }, "INVALID_INPUT"],
      [{ sessionId: "%2e%2e" }, "INVALID_INPUT"],
      [{ sessionId: "s2" }, "FORBIDDEN"],
      [{ principal: { kind: "user", id: "bob" } }, "FORBIDDEN"],
      [{ principal: { kind: "org", id: "alice" } }, "FORBIDDEN"],
      [{ principal: undefined }, "UNAUTHORIZED"],
      [{ principal: { kind: "user", id: "../alice" } }, "INVALID_INPUT"],
      [{ sessionId: "broken" }, "INTERNAL"],
    ];
    for (const [change, code] of refusals) {
      expect(await codeOf(() => uploads.requestUpload({ ...request, ...change } as never))).toBe(code);
    }
    expect(await codeOf(() => uploads.requestUpload(null as never))).toBe("INVALID_INPUT");
    expect(await codeOf(() => uploads.requestDownload(alice, "s1", "../x.png"))).toBe("INVALID_INPUT");
    expect(await codeOf(() => uploads.listArtifacts({ kind: "user", id: "bob" }, "s1"))).toBe("FORBIDDEN");
  });

  it("authenticates Bearer keys through auth.authenticate", async () => {
    expect(await uploads.authenticate("Bearer good")).toEqual(alice);
    expect(await codeOf(() => uploads.authenticate("Bearer bad"))).toBe("UNAUTHORIZED");
    expect(await codeOf(() => uploads.authenticate(undefined))).toBe("UNAUTHORIZED");
    expect(await codeOf(() => uploads.authenticate("Basic good"))).toBe("UNAUTHORIZED");
  });
});
