import { S3Client } from "@aws-sdk/client-s3";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createS3Client } from "../src/s3-client.js";

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
    await expectStowageError(() => createS3Client(options as never), "INVALID_INPUT");
  });
});
