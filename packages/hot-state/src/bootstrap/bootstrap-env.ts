import { type Env, envFlag, envPositiveInteger } from "@stowage/core";
import { DEFAULT_CONTEXT_BUDGET } from "../budget/context-budget.js";

/**
 * Files of at least this many characters are stored and referenced instead of inlined: one more
 * than the default budget's `maxInlineArtifactChars` (2,000), so a file the default budget would
 * refuse inline is referenced instead (2,001). Here, without zod, so that reading the settings
 * loads no schema.
 */
export const DEFAULT_BOOTSTRAP_THRESHOLD_CHARS = DEFAULT_CONTEXT_BUDGET.maxInlineArtifactChars + 1;

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
