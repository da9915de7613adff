import { type Env, envFlag, envPositiveInteger } from "@stowage/core";
import { DEFAULT_BOOTSTRAP_THRESHOLD_CHARS } from "./bootstrap-threshold.js";

// The variable names are the design document's: "artifact refs" there are this package's content refs.
const ARTIFACT_REFS_ENV = "STOWAGE_ARTIFACT_REFS";
const ARTIFACT_REFS_THRESHOLD_ENV = "STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS";

/** The settings of bootstrap refs that {@link bootstrapOptionsFromEnv} reads. */
export interface BootstrapEnvOptions {
  /** `STOWAGE_ARTIFACT_REFS`: `true`/`1`/`yes`/`on` or `false`/`0`/`no`/`off`. Unset: false. */
  enabled: boolean;
  /** `STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS`, a positive integer. Unset: {@link DEFAULT_BOOTSTRAP_THRESHOLD_CHARS}. */
  thresholdChars: number;
}

/**
 * `{ enabled, thresholdChars }` for `buildBootstrapContext` from the environment. A value that is
 * not understood throws INVALID_INPUT (reason `INVALID_SETTING`) instead of quietly meaning "off".
 */
export function bootstrapOptionsFromEnv(env: Env = process.env): BootstrapEnvOptions {
  return {
    enabled: envFlag(env, ARTIFACT_REFS_ENV) ?? false,
    thresholdChars: envPositiveInteger(env, ARTIFACT_REFS_THRESHOLD_ENV) ?? DEFAULT_BOOTSTRAP_THRESHOLD_CHARS,
  };
}
