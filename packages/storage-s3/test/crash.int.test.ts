import {
  AbortMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
} from "@aws-sdk/client-s3";
import { spawnChild } from "@stowage/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { createS3ObjectStore } from "../src/s3-object-store.js";
import { bucket, emptyPrefix, s3SkipReason, testClient, uniquePrefix } from "./support/s3-env.js";

const client = testClient();
const prefix = uniquePrefix("crash");

async function uploadsUnderPrefix() {
  return (
    (await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }))).Uploads ?? []
  );
}

describe.skipIf(s3SkipReason !== undefined)("a writer killed mid-upload", () => {
  afterAll(async () => {
    for (const upload of await uploadsUnderPrefix()) {
      await client.send(
        new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key!, UploadId: upload.UploadId! }),
      );
    }
    await emptyPrefix(client, prefix);
  });

  it("leaves no object, only an incomplete multipart upload that a lifecycle rule or abort removes", async () => {
    const child = spawnChild(new URL("./children/endless-put.ts", import.meta.url), [prefix, "video.mp4"], {
      stdout: "ignore",
    });
    let stderr = "";
    child.stderr!.on("data", (data: Buffer) => {
      stderr += data.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // Kill it once at least two parts are stored: a real crash in the middle of a multipart upload.
    const deadline = Date.now() + 60_000;
    let parts = 0;
    while (parts < 2) {
      expect(Date.now() < deadline, `the child never uploaded two parts: ${stderr}`).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const [upload] = await uploadsUnderPrefix();
      if (upload) {
        const listed = await client.send(
          new ListPartsCommand({ Bucket: bucket, Key: upload.Key!, UploadId: upload.UploadId! }),
        );
        parts = listed.Parts?.length ?? 0;
      }
    }
    child.kill("SIGKILL");
    expect(await exited).toBeNull();

    const store = createS3ObjectStore({ client, bucket, prefix });
    expect(await store.head("video.mp4")).toBeNull();
    expect((await store.list()).items).toEqual([]);
    expect((await uploadsUnderPrefix()).map((upload) => upload.Key)).toEqual([`${prefix}video.mp4`]);
  });
});
