import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  createFsObjectStore,
  type FsObjectStore,
  type FsObjectStoreWithDirectUrls,
} from "../src/fs-object-store.js";

const base = await mkdtemp(join(tmpdir(), "stowage-fs-direct-type-"));
const directUrls = {
  baseUrl: "http://127.0.0.1:8787/direct",
  secret: "a-type-test-secret-of-32-bytes-or-more",
};

describe("createFsObjectStore's type follows directUrls", () => {
  it("with directUrls: the URL methods and the handler need no `!`", async () => {
    const store = createFsObjectStore({ root: join(base, "with"), directUrls });
    expectTypeOf(store).toEqualTypeOf<FsObjectStoreWithDirectUrls>();
    expectTypeOf(store.handleDirectRequest).toEqualTypeOf<(request: Request) => Promise<Response>>();
    const bytes = new TextEncoder().encode("hello");
    const { url, headers } = await store.createUploadUrl({
      key: "a/b.txt",
      contentType: "text/plain",
      contentLength: bytes.byteLength,
      expiresInSeconds: 60,
    });
    const response = await store.handleDirectRequest(
      new Request(url, { method: "PUT", headers, body: bytes }),
    );
    expect(response.ok).toBe(true);
    const download = await store.createDownloadUrl({ key: "a/b.txt", expiresInSeconds: 60 });
    expect(await (await store.handleDirectRequest(new Request(download.url))).text()).toBe("hello");
  });

  it("without directUrls: they stay optional, and are absent", () => {
    const store = createFsObjectStore({ root: join(base, "without") });
    expectTypeOf(store).toEqualTypeOf<FsObjectStore>();
    expect(store.createUploadUrl).toBeUndefined();
    expect(store.handleDirectRequest).toBeUndefined();
  });
});
