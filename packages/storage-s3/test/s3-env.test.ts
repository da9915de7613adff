import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createS3Client } from "../src/s3-client.js";
import { s3OptionsFromEnv } from "../src/s3-env.js";
import { createS3ObjectStore } from "../src/s3-object-store.js";

describe("s3OptionsFromEnv", () => {
  it("reads the S3_* environment, blank variables counting as unset", () => {
    expect(
      s3OptionsFromEnv({
        S3_ENDPOINT: "http://127.0.0.1:7480",
        S3_REGION: "",
        S3_ACCESS_KEY_ID: "a",
        S3_SECRET_ACCESS_KEY: "b",
        S3_SESSION_TOKEN: " ",
        S3_FORCE_PATH_STYLE: "false",
        S3_BUCKET: "stowage",
      }),
    ).toEqual({
      client: {
        endpoint: "http://127.0.0.1:7480",
        accessKeyId: "a",
        secretAccessKey: "b",
        forcePathStyle: false,
      },
      bucket: "stowage",
    });
    expect(s3OptionsFromEnv({ S3_BUCKET: "b", S3_REGION: "eu-west-1", S3_SESSION_TOKEN: "t" })).toEqual({
      client: { region: "eu-west-1", sessionToken: "t" },
      bucket: "b",
    });
  });

  it("reads whether the server verifies upload checksums (AWS S3 does, Ceph RGW 16 does not)", async () => {
    expect(s3OptionsFromEnv({ S3_BUCKET: "b", S3_VERIFIES_UPLOAD_CHECKSUMS: "false" })).toEqual({
      client: {},
      bucket: "b",
      verifiesUploadChecksums: false,
    });
    expect(
      s3OptionsFromEnv({ S3_BUCKET: "b", S3_VERIFIES_UPLOAD_CHECKSUMS: "1" })?.verifiesUploadChecksums,
    ).toBe(true);
    expect(s3OptionsFromEnv({ S3_BUCKET: "b" })).not.toHaveProperty("verifiesUploadChecksums");
    await expectStowageError(
      () => s3OptionsFromEnv({ S3_BUCKET: "b", S3_VERIFIES_UPLOAD_CHECKSUMS: "maybe" }),
      "INVALID_INPUT",
      "INVALID_SETTING",
    );
  });

  it("is undefined when S3 is not configured", () => {
    expect(s3OptionsFromEnv({})).toBeUndefined();
    expect(s3OptionsFromEnv({ S3_BUCKET: "", S3_ENDPOINT: " ", S3_REGION: "eu-west-1" })).toBeUndefined();
  });

  it.each([
    ["an endpoint without a bucket", { S3_ENDPOINT: "http://127.0.0.1:7480" }, "S3_BUCKET"],
    ["a key id without its secret", { S3_BUCKET: "b", S3_ACCESS_KEY_ID: "a" }, "S3_SECRET_ACCESS_KEY"],
    ["a secret without its key id", { S3_BUCKET: "b", S3_SECRET_ACCESS_KEY: "s" }, "S3_ACCESS_KEY_ID"],
    ["an endpoint that is no URL", { S3_BUCKET: "b", S3_ENDPOINT: "127.0.0.1:7480" }, "S3_ENDPOINT"],
    [
      "a path style that is no flag",
      { S3_BUCKET: "b", S3_FORCE_PATH_STYLE: "sometimes" },
      "S3_FORCE_PATH_STYLE",
    ],
    // Refused by createS3ObjectStore: refused here too, naming the variable, not at start-up.
    ["a bucket with a space", { S3_BUCKET: "my bucket" }, "S3_BUCKET"],
    ["a bucket with a slash", { S3_BUCKET: "a/b" }, "S3_BUCKET"],
    ["a bucket longer than 255 characters", { S3_BUCKET: "b".repeat(256) }, "S3_BUCKET"],
    ["an endpoint that is not http(s)", { S3_BUCKET: "b", S3_ENDPOINT: "ftp://127.0.0.1" }, "S3_ENDPOINT"],
  ])("refuses %s", async (_why, env, setting) => {
    const err = await expectStowageError(() => s3OptionsFromEnv(env), "INVALID_INPUT", "INVALID_SETTING");
    expect(err.details).toEqual({ setting });
  });

  it.each([
    ["a bucket alone", { S3_BUCKET: "stowage" }],
    ["RGW", { S3_ENDPOINT: "http://127.0.0.1:7480", S3_BUCKET: "Stowage_Test.1", S3_REGION: "us-east-1" }],
    ["static credentials", { S3_BUCKET: "b", S3_ACCESS_KEY_ID: "a", S3_SECRET_ACCESS_KEY: "s" }],
    ["a session token and path style", { S3_BUCKET: "b", S3_SESSION_TOKEN: "t", S3_FORCE_PATH_STYLE: "on" }],
    ["a 255-character bucket", { S3_BUCKET: "b".repeat(255) }],
  ])("what it accepts (%s) the client and the store accept", (_why, env) => {
    const options = s3OptionsFromEnv(env)!;
    const store = createS3ObjectStore({
      client: createS3Client(options.client),
      bucket: options.bucket,
      ...(options.verifiesUploadChecksums === undefined
        ? {}
        : { verifiesUploadChecksums: options.verifiesUploadChecksums }),
    });
    expect(store.bucket).toBe(env.S3_BUCKET);
  });
});
