import { describeValue, StowageError } from "@stowage/core";
import { DEFAULT_BOOTSTRAP_THRESHOLD_CHARS } from "./build-bootstrap-context.js";

/** Turns bootstrap artifact refs on (`true`, `1`, `yes`, `on`) or off (`false`, `0`, `no`, `off`). Unset: off. */
export const ARTIFACT_REFS_ENV = "STOWAGE_ARTIFACT_REFS";
/** The `thresholdChars` of bootstrap refs, a positive integer. Unset: {@link DEFAULT_BOOTSTRAP_THRESHOLD_CHARS}. */
export const ARTIFACT_REFS_THRESHOLD_ENV = "STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS";

const TRUE_WORDS = new Set(["true", "1", "yes", "on"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off", ""]);

/**
 * `{ enabled, thresholdChars }` for `buildBootstrapContext` from the environment. A value that is
 * not understood throws INVALID_INPUT instead of quietly meaning "off".
 */
export function bootstrapOptionsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): {
  enabled: boolean;
  thresholdChars: number;
} {
  const flag = env[ARTIFACT_REFS_ENV]?.trim().toLowerCase();
  let enabled = false;
  if (flag !== undefined) {
    if (TRUE_WORDS.has(flag)) enabled = true;
    else if (!FALSE_WORDS.has(flag)) {
      throw new StowageError(
        "INVALID_INPUT",
        `${ARTIFACT_REFS_ENV} must be true/false, 1/0, yes/no or on/off, got ${describeValue(env[ARTIFACT_REFS_ENV])}`,
      );
    }
  }
  const rawThreshold = env[ARTIFACT_REFS_THRESHOLD_ENV]?.trim();
  let thresholdChars = DEFAULT_BOOTSTRAP_THRESHOLD_CHARS;
  if (rawThreshold !== undefined && rawThreshold !== "") {
    const value = /^\d{1,15}$/.test(rawThreshold) ? Number(rawThreshold) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new StowageError(
        "INVALID_INPUT",
        `${ARTIFACT_REFS_THRESHOLD_ENV} must be a positive integer, got ${describeValue(env[ARTIFACT_REFS_THRESHOLD_ENV])}`,
      );
    }
    thresholdChars = value;
  }
  return { enabled, thresholdChars };
}
