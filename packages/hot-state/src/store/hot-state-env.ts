import { type Env, envPositiveInteger } from "@stowage/core";

const KEEP_VERSIONS_ENV = "STOWAGE_HOT_STATE_KEEP_VERSIONS";

/** The settings of `createHotStateStore` that {@link hotStateStoreOptionsFromEnv} reads. */
export interface HotStateStoreEnvOptions {
  /** `STOWAGE_HOT_STATE_KEEP_VERSIONS`, a positive integer. Unset: every version is kept. */
  keepVersions?: number;
}

/**
 * `{ keepVersions }` for `createHotStateStore` from the environment. A value that is not a
 * positive integer throws INVALID_INPUT (reason `INVALID_SETTING`) instead of quietly keeping all.
 */
export function hotStateStoreOptionsFromEnv(env: Env = process.env): HotStateStoreEnvOptions {
  const keepVersions = envPositiveInteger(env, KEEP_VERSIONS_ENV);
  return keepVersions === undefined ? {} : { keepVersions };
}
