// The settings reader, `s3OptionsFromEnv`, is the `./env` entry: it never loads the AWS SDK.
export { createS3Client, type S3ClientOptions } from "./s3-client.js";
export { createS3ObjectStore, type S3ObjectStore, type S3ObjectStoreOptions } from "./s3-object-store.js";
