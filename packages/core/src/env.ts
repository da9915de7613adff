import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";

/** What the `…OptionsFromEnv` functions read: `process.env` or any plain record of strings. */
export type Env = Readonly<Record<string, string | undefined>>;

const TRUE_WORDS = new Set(["true", "1", "yes", "on"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off"]);

function invalid(name: string, raw: string, accepted: string): StowageError {
  return new StowageError("INVALID_INPUT", `${name} must be ${accepted}, got ${describeValue(raw)}`, {
    reason: "INVALID_SETTING",
    details: { setting: name },
  });
}

/** The trimmed value of `name`; unset and empty (or blank) values are undefined, so they mean "default". */
export function envString(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** `true`/`1`/`yes`/`on` or `false`/`0`/`no`/`off` (any case); anything else is INVALID_INPUT, never a quiet "off". */
export function envFlag(env: Env, name: string): boolean | undefined {
  const raw = envString(env, name);
  if (raw === undefined) return undefined;
  const word = raw.toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw invalid(name, raw, "true/false, 1/0, yes/no or on/off");
}

/** A positive whole number written in plain digits (`8000`, not `8k`, `1e4` or `8000.0`). */
export function envPositiveInteger(env: Env, name: string): number | undefined {
  const raw = envString(env, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw invalid(name, raw, "a positive whole number");
  }
  return value;
}

/** A positive decimal number written in plain digits (`50`, `0.5`), for sizes in MiB and durations in days. */
export function envPositiveNumber(env: Env, name: string): number | undefined {
  const raw = envString(env, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !Number.isFinite(value) || value <= 0) {
    throw invalid(name, raw, "a positive number");
  }
  return value;
}

/** An `http:` or `https:` URL (or, with `protocols`, one of those schemes). */
export function envUrl(
  env: Env,
  name: string,
  protocols: readonly string[] = ["http:", "https:"],
): string | undefined {
  const raw = envString(env, name);
  if (raw === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !protocols.includes(url.protocol)) {
    // The value may hold a password (`postgres://user:secret@host`): never quoted back.
    throw new StowageError(
      "INVALID_INPUT",
      `${name} must be a URL starting with ${protocols.map((p) => `${p}//`).join(" or ")}${url ? `, got one starting with ${url.protocol}//` : ""}`,
      { reason: "INVALID_SETTING", details: { setting: name } },
    );
  }
  return raw;
}
