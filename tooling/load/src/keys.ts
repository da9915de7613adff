import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3OptionsFromEnv } from "@stowage/storage-s3/env";
import { createSharedStores } from "@stowage/tenancy/shared";

/**
 * API keys for the run's principals, issued straight into the deployment's shared store (S3), as
 * `stowage keys create` would, without a CLI process per principal.
 */
export async function issueKeys(
  principalIds: string[],
  env: NodeJS.ProcessEnv,
): Promise<Map<string, string>> {
  const s3 = s3OptionsFromEnv(env);
  if (!s3)
    throw new Error(
      "S3_BUCKET is not set: the load harness runs on S3 (source /tmp/rgw.env, or tooling/rgw/start.sh)",
    );
  const shared = createS3ObjectStore({ client: createS3Client(s3.client), bucket: s3.bucket });
  const { apiKeys } = createSharedStores({ shared });
  const keys = new Map<string, string>();
  for (const id of principalIds) {
    keys.set(id, (await apiKeys.issue({ kind: "user", id }, { label: "load" })).apiKey);
  }
  return keys;
}
