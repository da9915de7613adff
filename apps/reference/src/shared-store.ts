import type { ObjectStore } from "@stowage/core";
import type { StorageConfig } from "./config.js";

// What the server (services.ts) and the CLI's light openers (cli/shared-stores.ts) build alike,
// here so that a command opening the shared store loads no server or database package.

/** The directory, in the data directory, of every principal's agent sessions. */
export const AGENT_SESSIONS_DIR = "agent-sessions";

/** The S3 store of the `S3_*` settings; the AWS SDK is loaded only here. */
export async function s3StoreFor(s3Config: NonNullable<StorageConfig["s3"]>): Promise<ObjectStore> {
  const { createS3Client, createS3ObjectStore } = await import("@stowage/storage-s3");
  return createS3ObjectStore({
    client: createS3Client(s3Config.client),
    bucket: s3Config.bucket,
    ...(s3Config.verifiesUploadChecksums === undefined
      ? {}
      : { verifiesUploadChecksums: s3Config.verifiesUploadChecksums }),
  });
}
