export { DEFAULT_PARTS_IN_FLIGHT } from "./concurrent-parts.js";
export { createS3Client, type S3ClientOptions } from "./s3-client.js";
export { type S3EnvOptions, s3OptionsFromEnv } from "./s3-env.js";
export {
  createS3ObjectStore,
  DEFAULT_PART_SIZE_BYTES,
  MAX_PART_SIZE_BYTES,
  MAX_PARTS,
  MAX_PARTS_IN_FLIGHT,
  MAX_SINGLE_PUT_BYTES,
  MIN_PART_SIZE_BYTES,
  type S3ObjectStore,
  type S3ObjectStoreOptions,
} from "./s3-object-store.js";
