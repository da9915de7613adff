import { fromSystemError, StowageError, type StowageErrorCode } from "@stowage/core";

// SQLSTATE classes and codes → StowageError codes. Exact codes win over their class.
const CODE_BY_SQLSTATE: Readonly<Record<string, StowageErrorCode>> = {
  "23505": "ALREADY_EXISTS",
  "40001": "CONFLICT",
  "40P01": "CONFLICT",
  "53100": "STORAGE_FULL",
  "54000": "TOO_LARGE",
  "57014": "ABORTED",
  "42501": "FORBIDDEN",
  "3D000": "UNAVAILABLE",
  "42P01": "INTERNAL",
};
const CODE_BY_CLASS: Readonly<Record<string, StowageErrorCode>> = {
  "08": "UNAVAILABLE",
  "22": "INVALID_INPUT",
  "23": "INVALID_INPUT",
  "28": "UNAUTHORIZED",
  "53": "UNAVAILABLE",
  "57": "UNAVAILABLE",
};

/** The SQLSTATE of a driver error, looking through wrappers (drizzle's DrizzleQueryError). */
export function sqlStateOf(err: unknown): string | undefined {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function innermostMessage(err: unknown): string {
  let current = err;
  for (let depth = 0; depth < 5; depth++) {
    const cause = (current as { cause?: unknown })?.cause;
    if (!cause) break;
    current = cause;
  }
  return current instanceof Error ? current.message : String(current);
}

/**
 * Maps a database error to a StowageError at the edge: SQLSTATE 23505 → ALREADY_EXISTS, class 08
 * → UNAVAILABLE, 53100 → STORAGE_FULL, 42P01 (a missing table: migrations not run) → INTERNAL …;
 * network errors (ECONNREFUSED …) through core's errno mapping. `context` says what was done.
 */
export function fromDatabaseError(err: unknown, context: string): StowageError {
  if (StowageError.is(err)) return err;
  const state = sqlStateOf(err);
  if (state === undefined) {
    const cause = (err as { cause?: unknown })?.cause;
    return fromSystemError(cause && (cause as { code?: unknown }).code ? cause : err, context);
  }
  const code = CODE_BY_SQLSTATE[state] ?? CODE_BY_CLASS[state.slice(0, 2)] ?? "INTERNAL";
  const hint = state === "42P01" ? " (are Stowage's migrations applied in this schema?)" : "";
  return new StowageError(code, `${context}: ${innermostMessage(err)}${hint}`, { cause: err, reason: state });
}
