// `@stowage/hot-state/env`: the settings readers alone, which load no schema (zod) and no
// tokenizer, so that an app reads its configuration without loading the package.
import { type Env, envFlag, envPositiveInteger } from "@stowage/core";
import { DEFAULT_BOOTSTRAP_THRESHOLD_CHARS } from "./budget/context-budget.js";

/** The settings of bootstrap refs that {@link bootstrapOptionsFromEnv} reads. */
export interface BootstrapEnvOptions {
  /** `STOWAGE_ARTIFACT_REFS` (or `OPENCLAW_ARTIFACT_REFS`): `true`/`1`/`yes`/`on` or `false`/`0`/`no`/`off`. Unset: false. */
  enabled: boolean;
  /** `STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS` (or `OPENCLAW_ARTIFACT_REFS_THRESHOLD_CHARS`), a positive integer. Unset: 2,001. */
  thresholdChars: number;
}

/**
 * `{ enabled, thresholdChars }` for `buildBootstrapContext` from the environment; the design
 * document's names (`OPENCLAW_…`) too, `STOWAGE_…` winning. A value that is not understood
 * throws INVALID_INPUT (reason `INVALID_SETTING`) instead of quietly meaning "off".
 */
export function bootstrapOptionsFromEnv(env: Env = process.env): BootstrapEnvOptions {
  const setting = <T>(read: (env: Env, name: string) => T | undefined, name: string) =>
    read(env, `STOWAGE_${name}`) ?? read(env, `OPENCLAW_${name}`);
  return {
    enabled: setting(envFlag, "ARTIFACT_REFS") ?? false,
    thresholdChars:
      setting(envPositiveInteger, "ARTIFACT_REFS_THRESHOLD_CHARS") ?? DEFAULT_BOOTSTRAP_THRESHOLD_CHARS,
  };
}

/** The settings of `createHotStateStore` that {@link hotStateStoreOptionsFromEnv} reads. */
export interface HotStateStoreEnvOptions {
  /** `STOWAGE_HOT_STATE_KEEP_VERSIONS`, a positive integer. Unset: every version is kept. */
  keepVersions?: number;
}

/** `{ keepVersions }` for `createHotStateStore`; INVALID_INPUT (`INVALID_SETTING`) for what is not a positive integer. */
export function hotStateStoreOptionsFromEnv(env: Env = process.env): HotStateStoreEnvOptions {
  const keepVersions = envPositiveInteger(env, "STOWAGE_HOT_STATE_KEEP_VERSIONS");
  return keepVersions === undefined ? {} : { keepVersions };
}
