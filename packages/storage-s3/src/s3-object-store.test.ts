import { S3Client } from "@aws-sdk/client-s3";
import { StowageError } from "@stowage/core";
import { HOSTILE_KEYS } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createS3Client, s3ClientOptionsFromEnv } from "./s3-client.js";
import { createS3ObjectStore, MIN_PART_SIZE_BYTES } from "./s3-object-store.js";

// Nothing listens on port 1: any request that reaches the network fails with UNAVAILABLE.
const unreachable = createS3Client({
  endpoint: "http://127.0.0.1:1",
  accessKeyId: "a",
  secretAccessKey: "b",
});

const codeOf = async (action: () => unknown) => {
  try {
    await action();
    return "success";
  } catch (err) {
    return StowageError.is(err) ? err.code : String(err);
  }
};

describe("createS3Client", () => {
  it("computes and validates checksums only when required, path-style for custom endpoints", async () => {
    const client = createS3Client({
      endpoint: "http://127.0.0.1:7480",
      accessKeyId: "a",
      secretAccessKey: "b",
    });
    expect(client).toBeInstanceOf(S3Client);
    expect(await client.config.requestChecksumCalculation()).toBe("WHEN_REQUIRED");
    expect(await client.config.responseChecksumValidation()).toBe("WHEN_REQUIRED");
    expect(client.config.forcePathStyle).toBe(true);
    expect(await client.config.region()).toBe("us-east-1");
    expect(createS3Client({ region: "eu-west-1" }).config.forcePathStyle).toBe(false);
  });

  it.each([
    { endpoint: "ftp://host" },
    { endpoint: "not a url" },
    { endpoint: "" },
    { region: 5 },
    { accessKeyId: "only-one" },
    { forcePathStyle: "yes" },
  ])("rejects %j", async (options) => {
    expect(await codeOf(() => createS3Client(options as never))).toBe("INVALID_INPUT");
  });

  it("reads the S3_* environment", () => {
    expect(
      s3ClientOptionsFromEnv({
        S3_ENDPOINT: "http://127.0.0.1:7480",
        S3_REGION: "",
        S3_ACCESS_KEY_ID: "a",
        S3_SECRET_ACCESS_KEY: "b",
        S3_FORCE_PATH_STYLE: "false",
      }),
    ).toEqual({
      endpoint: "http://127.0.0.1:7480",
      accessKeyId: "a",
      secretAccessKey: "b",
      forcePathStyle: false,
    });
    expect(() => s3ClientOptionsFromEnv({ S3_FORCE_PATH_STYLE: "1" })).toThrow(StowageError);
  });
});

describe("createS3ObjectStore", () => {
  it.each([
    ["no client", { bucket: "b" }],
    ["a client without send", { client: {}, bucket: "b" }],
    ["no bucket", { client: unreachable }],
    ["a bucket with a slash", { client: unreachable, bucket: "a/b" }],
    ["a prefix without trailing slash", { client: unreachable, bucket: "b", prefix: "tenant" }],
    ["a traversal prefix", { client: unreachable, bucket: "b", prefix: "../x/" }],
    ["an absolute prefix", { client: unreachable, bucket: "b", prefix: "/x/" }],
    [
      "a part size below the S3 minimum",
      { client: unreachable, bucket: "b", partSizeBytes: MIN_PART_SIZE_BYTES - 1 },
    ],
    ["a fractional part size", { client: unreachable, bucket: "b", partSizeBytes: 6e6 + 0.5 }],
    ["conditionalWrites not boolean", { client: unreachable, bucket: "b", conditionalWrites: "yes" }],
    ["an empty spool directory", { client: unreachable, bucket: "b", spoolDirectory: "" }],
  ])("rejects %s", async (_why, options) => {
    expect(await codeOf(() => createS3ObjectStore(options as never))).toBe("INVALID_INPUT");
  });

  it("declares its capabilities", () => {
    const store = createS3ObjectStore({ client: unreachable, bucket: "b", prefix: "p/" });
    expect(store.capabilities).toEqual({
      atomicCreateOnly: true,
      contentType: true,
      nativeMove: true,
      nativeTouch: true,
      directUpload: true,
      directDownload: true,
    });
    expect(
      createS3ObjectStore({ client: unreachable, bucket: "b", conditionalWrites: false }).capabilities
        .atomicCreateOnly,
    ).toBe(false);
    expect(store.s3KeyFor("a/b.txt")).toBe("p/a/b.txt");
    expect(() => store.s3KeyFor("../x")).toThrow(StowageError);
  });

  it("rejects every hostile key before touching the network", async () => {
    const store = createS3ObjectStore({ client: unreachable, bucket: "b" });
    expect(await codeOf(() => store.head("valid"))).toBe("UNAVAILABLE");
    for (const { value } of HOSTILE_KEYS) {
      const key = value as string;
      expect(await codeOf(() => store.put(key, new Uint8Array(1)))).toBe("INVALID_INPUT");
      expect(await codeOf(() => store.get(key))).toBe("INVALID_INPUT");
      expect(await codeOf(() => store.move("valid", key))).toBe("INVALID_INPUT");
      expect(
        await codeOf(() =>
          store.createUploadUrl({ key, contentType: "image/png", contentLength: 1, expiresInSeconds: 60 }),
        ),
      ).toBe("INVALID_INPUT");
      expect(await codeOf(() => store.createDownloadUrl({ key, expiresInSeconds: 60 }))).toBe(
        "INVALID_INPUT",
      );
    }
  });

  it("signs URLs without a server, and rejects bad URL requests", async () => {
    const store = createS3ObjectStore({ client: unreachable, bucket: "b", prefix: "p/" });
    const upload = await store.createUploadUrl({
      key: "a.png",
      contentType: "image/png",
      contentLength: 3,
      expiresInSeconds: 60,
    });
    expect(new URL(upload.url).pathname).toBe("/b/p/a.png");
    for (const bad of [
      { contentType: "image/png\r\nx: y" },
      { contentLength: -1 },
      { contentLength: 1.5 },
      { sha256: "XYZ" },
      { expiresInSeconds: 0 },
      { expiresInSeconds: 8 * 24 * 3600 },
    ]) {
      const request = {
        key: "a.png",
        contentType: "image/png",
        contentLength: 3,
        expiresInSeconds: 60,
        ...bad,
      };
      expect(await codeOf(() => store.createUploadUrl(request))).toBe("INVALID_INPUT");
    }
    for (const attachmentFilename of ["a/b.png", "a\nb", ""]) {
      expect(
        await codeOf(() =>
          store.createDownloadUrl({ key: "a.png", expiresInSeconds: 60, attachmentFilename }),
        ),
      ).toBe("INVALID_INPUT");
    }
  });
});
