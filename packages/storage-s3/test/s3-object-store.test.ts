import { StowageError } from "@stowage/core";
import { expectStowageError, HOSTILE_KEYS } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createS3Client } from "../src/s3-client.js";
import { createS3ObjectStore } from "../src/s3-object-store.js";
import { MIN_PART_SIZE_BYTES } from "../src/s3-options.js";

// Nothing listens on port 1: any request that reaches the network fails with UNAVAILABLE.
const unreachable = createS3Client({
  endpoint: "http://127.0.0.1:1",
  accessKeyId: "a",
  secretAccessKey: "b",
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
    ["no parts in flight", { client: unreachable, bucket: "b", partsInFlight: 0 }],
    ["too many parts in flight", { client: unreachable, bucket: "b", partsInFlight: 65 }],
    ["fractional parts in flight", { client: unreachable, bucket: "b", partsInFlight: 2.5 }],
    ["parts in flight as a string", { client: unreachable, bucket: "b", partsInFlight: "4" }],
  ])("rejects %s", async (_why, options) => {
    await expectStowageError(() => createS3ObjectStore(options as never), "INVALID_INPUT");
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
      // Not trusted unless the caller says the server checks it (verifiesUploadChecksums: AWS S3):
      // Ceph RGW 16 stores a body that misses the signed checksum.
      directUploadVerifiesSha256: false,
      // A server-side copy is a new object with a new Last-Modified.
      moveKeepsLastModified: false,
    });
    expect(
      createS3ObjectStore({ client: unreachable, bucket: "b", conditionalWrites: false }).capabilities
        .atomicCreateOnly,
    ).toBe(false);
    expect(
      createS3ObjectStore({ client: unreachable, bucket: "b", verifiesUploadChecksums: true }).capabilities
        .directUploadVerifiesSha256,
    ).toBe(true);
    expect(store.s3KeyFor("a/b.txt")).toBe("p/a/b.txt");
    expect(() => store.s3KeyFor("../x")).toThrow(StowageError);
    expect(store.uriFor("a/b.txt")).toBe("s3://b/p/a/b.txt");
    expect(createS3ObjectStore({ client: unreachable, bucket: "b" }).uriFor("ü €.png")).toBe(
      "s3://b/ü €.png",
    );
    expect(() => store.uriFor("../x")).toThrow(StowageError);
  });

  it("rejects every hostile key before touching the network", async () => {
    const store = createS3ObjectStore({ client: unreachable, bucket: "b" });
    await expectStowageError(() => store.head("valid"), "UNAVAILABLE");
    for (const { value } of HOSTILE_KEYS) {
      const key = value as string;
      await expectStowageError(() => store.put(key, new Uint8Array(1)), "INVALID_INPUT");
      await expectStowageError(() => store.get(key), "INVALID_INPUT");
      await expectStowageError(() => store.move("valid", key), "INVALID_INPUT");
      await expectStowageError(
        () =>
          store.createUploadUrl({ key, contentType: "image/png", contentLength: 1, expiresInSeconds: 60 }),
        "INVALID_INPUT",
      );
      await expectStowageError(() => store.createDownloadUrl({ key, expiresInSeconds: 60 }), "INVALID_INPUT");
      expect(() => store.uriFor(key)).toThrow(StowageError);
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
      await expectStowageError(() => store.createUploadUrl(request), "INVALID_INPUT");
    }
    for (const filename of ["a/b.png", "a\nb", ""]) {
      await expectStowageError(
        () => store.createDownloadUrl({ key: "a.png", expiresInSeconds: 60, filename }),
        "INVALID_INPUT",
      );
    }
    await expectStowageError(
      () => store.createDownloadUrl({ key: "a.png", expiresInSeconds: 60, disposition: "download" as never }),
      "INVALID_INPUT",
    );
  });

  it("asks the server for the requested Content-Disposition, and for none by default", async () => {
    const store = createS3ObjectStore({ client: unreachable, bucket: "b", prefix: "p/" });
    const disposition = async (request: { disposition?: "inline" | "attachment"; filename?: string }) =>
      new URL(
        (await store.createDownloadUrl({ key: "dir/page.html", expiresInSeconds: 60, ...request })).url,
      ).searchParams.get("response-content-disposition");
    expect(await disposition({})).toBeNull();
    expect(await disposition({ disposition: "attachment", filename: "report é.html" })).toBe(
      `attachment; filename="report _.html"; filename*=UTF-8''report%20%C3%A9.html`,
    );
    expect(await disposition({ disposition: "inline" })).toBe(
      `inline; filename="page.html"; filename*=UTF-8''page.html`,
    );
    // The ASCII fallback replaces what old clients cannot read; parentheses are percent-encoded.
    expect(await disposition({ disposition: "attachment", filename: 'ünï "(1)".png' })).toBe(
      `attachment; filename="_n_ _(1)_.png"; filename*=UTF-8''%C3%BCn%C3%AF%20%22%281%29%22.png`,
    );
    expect(await disposition({ filename: "saved.html" })).toBe(
      `attachment; filename="saved.html"; filename*=UTF-8''saved.html`,
    );
  });

  it("reports created from one conditional PutObject for a small body, and looks first for a large one", async () => {
    // A server holding p/old; PutObject with If-None-Match on a held key answers 412, as S3 does.
    const held = new Set(["p/old"]);
    const sent: string[] = [];
    const server = {
      async send(command: { constructor: { name: string }; input: { Key: string; IfNoneMatch?: string } }) {
        const { Key, IfNoneMatch } = command.input;
        sent.push(
          `${command.constructor.name.replace("Command", "")} ${Key}${IfNoneMatch ? " if-none-match" : ""}`,
        );
        const status = (httpStatusCode: number, name: string) =>
          Object.assign(new Error(name), { name, $metadata: { httpStatusCode } });
        if (command.constructor.name === "HeadObjectCommand") {
          if (held.has(Key)) return { ContentLength: 1, ETag: '"e"' };
          throw status(404, "NotFound");
        }
        if (command.constructor.name !== "PutObjectCommand") throw new Error("not expected");
        if (IfNoneMatch === "*" && held.has(Key)) throw status(412, "PreconditionFailed");
        held.add(Key);
        return {};
      },
    };
    const store = createS3ObjectStore({ client: server as never, bucket: "b", prefix: "p/" });
    const small = new Uint8Array(1024 * 1024);
    const large = new Uint8Array(1024 * 1024 + 1);

    expect((await store.put("new", small)).created).toBe(true);
    expect(sent.splice(0)).toEqual(["PutObject p/new if-none-match"]);
    expect((await store.put("old", small)).created).toBe(false);
    expect(sent.splice(0)).toEqual(["PutObject p/old if-none-match", "PutObject p/old"]);
    expect((await store.put("large", large)).created).toBe(true);
    expect(sent.splice(0)).toEqual(["HeadObject p/large", "PutObject p/large"]);
    expect((await store.put("large", large)).created).toBe(false);
    expect(sent.splice(0)).toEqual(["HeadObject p/large", "PutObject p/large"]);
    // A server without conditional writes: a HEAD first, whatever the size.
    const plain = createS3ObjectStore({
      client: server as never,
      bucket: "b",
      prefix: "p/",
      conditionalWrites: false,
    });
    expect((await plain.put("other", small)).created).toBe(true);
    expect(sent.splice(0)).toEqual(["HeadObject p/other", "PutObject p/other"]);
  });

  it("refuses to move an object over 5 GiB (one CopyObject's most), saying the limit", async () => {
    // A server that holds one 6 GiB object at p/big and nothing else; any other call fails the test.
    const sent: string[] = [];
    const server = {
      async send(command: { constructor: { name: string }; input: { Key?: string } }) {
        sent.push(`${command.constructor.name} ${command.input.Key}`);
        if (command.constructor.name !== "HeadObjectCommand") throw new Error("not expected");
        if (command.input.Key === "p/big") return { ContentLength: 6 * 1024 ** 3, ETag: '"e"' };
        throw Object.assign(new Error("not found"), { name: "NotFound", $metadata: { httpStatusCode: 404 } });
      },
    };
    const store = createS3ObjectStore({ client: server as never, bucket: "b", prefix: "p/" });
    const err = await expectStowageError(() => store.move("big", "moved"), "TOO_LARGE");
    expect(err.details).toEqual({ limit: 5 * 1024 ** 3 });
    expect(sent).toEqual(["HeadObjectCommand p/big", "HeadObjectCommand p/moved"]);
  });
});
