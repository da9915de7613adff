import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { presignGet, presignPut } from "../src/presign.js";
import { createS3Client } from "../src/s3-client.js";

// Signing is local: no server is needed to check what a URL binds.
const client = createS3Client({
  endpoint: "http://127.0.0.1:7480",
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
});
const now = new Date("2026-01-02T03:04:05Z");

describe("presigned URLs", () => {
  it("a PUT binds content-type and content-length in the signature", async () => {
    const signed = await presignPut(client, {
      bucket: "b",
      key: "sessions/u/s/uploads/shot.png",
      contentType: "image/png",
      contentLength: 1234,
      expiresInSeconds: 900,
      now,
    });
    const url = new URL(signed.url);
    expect(url.origin).toBe("http://127.0.0.1:7480");
    expect(url.pathname).toBe("/b/sessions/u/s/uploads/shot.png");
    expect(url.searchParams.get("X-Amz-SignedHeaders")).toBe("content-length;content-type;host");
    expect(url.searchParams.get("X-Amz-Expires")).toBe("900");
    expect(url.searchParams.get("X-Amz-Date")).toBe("20260102T030405Z");
    // No flexible-checksum parameters: they would bind the CRC of an empty body.
    expect([...url.searchParams.keys()].filter((name) => /checksum/i.test(name))).toEqual([]);
    expect(signed).toMatchObject({
      method: "PUT",
      headers: { "content-type": "image/png", "content-length": "1234" },
      expiresAt: new Date(now.getTime() + 900_000),
    });
  });

  it("a PUT with a SHA-256 binds it as a header the uploader must send", async () => {
    const body = new TextEncoder().encode("hello");
    const sha256 = createHash("sha256").update(body).digest("hex");
    const signed = await presignPut(client, {
      bucket: "b",
      key: "k.txt",
      contentType: "text/plain",
      contentLength: body.byteLength,
      sha256,
      expiresInSeconds: 60,
      now,
    });
    const url = new URL(signed.url);
    expect(url.searchParams.get("X-Amz-SignedHeaders")).toBe(
      "content-length;content-type;host;x-amz-checksum-sha256",
    );
    expect(url.searchParams.has("x-amz-checksum-sha256")).toBe(false);
    expect(signed.headers["x-amz-checksum-sha256"]).toBe(Buffer.from(sha256, "hex").toString("base64"));
  });

  it("encodes unusual keys in the path", async () => {
    const signed = await presignPut(client, {
      bucket: "b",
      key: "a/%2e%2e/ü €.png",
      contentType: "image/png",
      contentLength: 1,
      expiresInSeconds: 60,
      now,
    });
    expect(new URL(signed.url).pathname).toBe("/b/a/%252e%252e/%C3%BC%20%E2%82%AC.png");
  });

  it("a GET can make the server send another Content-Disposition", async () => {
    const signed = await presignGet(client, {
      bucket: "b",
      key: "k.html",
      expiresInSeconds: 3600,
      contentDisposition: `attachment; filename="page.html"; filename*=UTF-8''page.html`,
      now,
    });
    const url = new URL(signed.url);
    expect(url.searchParams.get("response-content-disposition")).toBe(
      `attachment; filename="page.html"; filename*=UTF-8''page.html`,
    );
    expect(url.searchParams.get("X-Amz-Expires")).toBe("3600");
    expect(signed).toMatchObject({
      method: "GET",
      headers: {},
      expiresAt: new Date(now.getTime() + 3_600_000),
    });
  });
});
