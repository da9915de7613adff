// directUrlsFor: an fs store's signed URLs for another store (a memory store here, as a sealed
// store on S3 is in the app): uploads land in that store, downloads come from it, and what the
// URL binds is enforced as for the fs store's own URLs.
import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryObjectStore, StowageError } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { keysThroughWrapper } from "@stowage/test-support";
import { afterAll, describe, expect, it } from "vitest";

const root = await mkdtemp(join(tmpdir(), "stowage-direct-for-"));
afterAll(() => rm(root, { recursive: true, force: true }));
const baseUrl = "http://127.0.0.1:9/direct";
const bytes = new Uint8Array(3000).map((_, i) => (i * 7) % 256);
const sha256 = createHash("sha256").update(bytes).digest("hex");

function served(checkUpload?: () => Promise<void>) {
  const fs = createFsObjectStore({
    root,
    directUrls: {
      baseUrl,
      secret: "a-test-secret-that-is-at-least-32-bytes-long",
      ...(checkUpload ? { checkUpload } : {}),
    },
  });
  const other = createMemoryObjectStore();
  return { fs, other, store: fs.directUrlsFor(other) };
}

const put = (url: string, headers: Record<string, string>, body: Uint8Array) =>
  new Request(url, { method: "PUT", headers, body, duplex: "half" } as RequestInit);

/** A URL to upload `bytes` as a PNG to `key`, its SHA-256 bound. */
const signPng = (store: ReturnType<typeof served>["store"], key: string) =>
  store.createUploadUrl({
    key,
    contentType: "image/png",
    contentLength: bytes.byteLength,
    sha256,
    expiresInSeconds: 60,
  });

describe("an fs store's signed URLs for another store", () => {
  it("puts an upload into that store, serves its download, and writes nothing under the fs root", async () => {
    const { store, other } = served();
    expect(store.capabilities).toMatchObject({
      directUpload: true,
      directDownload: true,
      directUploadVerifiesSha256: true,
    });
    const key = "sessions/user/alice/s1/artifacts/a.png";
    const signed = await signPng(store, key);
    expect(signed.url.startsWith(`${baseUrl}/`)).toBe(true);
    const response = await store.handleDirectRequest(put(signed.url, signed.headers, bytes));
    expect(response.status).toBe(200);
    expect(await other.get(key)).toEqual(bytes);
    expect(await readdir(root)).toEqual([]);
    const download = await store.createDownloadUrl({ key, expiresInSeconds: 60 });
    const got = await store.handleDirectRequest(new Request(download.url));
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(bytes);
  });

  it("lists keys through that store's names-only listing, not a read of every item", async () => {
    const { fs } = served();
    expect(await keysThroughWrapper((inner) => fs.directUrlsFor(inner))).toEqual({
      calls: ["keys", "keys"],
      keys: ["a/1", "a/2"],
      pages: [["a/1", "a/2"], ["b/1"]],
    });
  });

  it("refuses what the URL does not bind and asks the fs store's check; nothing is stored", async () => {
    const refusing = served(async () => {
      throw new StowageError("NOT_FOUND", "revoked");
    });
    const { store, other } = served();
    const key = "sessions/user/alice/s1/artifacts/b.png";
    const signed = await signPng(store, key);
    const otherBytes = bytes.map((b) => b ^ 1);
    const cases: [string, Request, number][] = [
      ["other bytes of the signed length", put(signed.url, signed.headers, otherBytes), 422],
      [
        "another content type",
        put(signed.url, { ...signed.headers, "content-type": "text/html" }, bytes),
        403,
      ],
      ["a key changed in the URL", put(signed.url.replace("b.png", "c.png"), signed.headers, bytes), 403],
    ];
    for (const [name, request, status] of cases) {
      const response = await store.handleDirectRequest(request);
      expect(response.status, name).toBe(status);
    }
    expect(await other.head(key)).toBeNull();
    const revoked = await refusing.store.handleDirectRequest(put(signed.url, signed.headers, bytes));
    expect(revoked.status).toBe(404);
    expect(await refusing.other.head(key)).toBeNull();
  });
});
