import { describeValue } from "../describe-value.js";
import { StowageError, type StowageErrorCode } from "../errors.js";

/**
 * Awaits `action` (a promise, or a function that may throw or return one) and checks that it
 * failed with a StowageError of `code` (and `reason`, when given); returns that error for further
 * checks. Tests assert on codes, never on message text.
 */
export async function expectStowageError(
  action: Promise<unknown> | (() => unknown),
  code: StowageErrorCode,
  reason?: string,
): Promise<StowageError> {
  let value: unknown;
  try {
    value = await (typeof action === "function" ? action() : action);
  } catch (err) {
    if (!StowageError.is(err)) {
      throw new Error(
        `expected a StowageError ${code}, got ${err instanceof Error ? err.stack : describeValue(err)}`,
        {
          cause: err,
        },
      );
    }
    if (err.code !== code || (reason !== undefined && err.reason !== reason)) {
      const wanted = reason === undefined ? code : `${code} (${reason})`;
      const got = err.reason === undefined ? err.code : `${err.code} (${err.reason})`;
      throw new Error(`expected a StowageError ${wanted}, got ${got}: ${err.message}`, { cause: err });
    }
    return err;
  }
  throw new Error(`expected a StowageError ${code}, but it succeeded with ${describeValue(value)}`);
}
