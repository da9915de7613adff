import { describeValue, StowageError } from "@stowage/core";

/**
 * A plain copy of what a caller passed as an options object (or a tool's input), read once: every
 * later read is of the copy, so a getter or a Proxy trap that throws becomes INVALID_INPUT here,
 * never a TypeError escaping a function that promises not to throw. `undefined` reads as `{}`.
 */
export function readOptions<T extends object>(value: T | null | undefined, what: string): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null) {
    throw new StowageError("INVALID_INPUT", `${what} must be an object, got ${describeValue(value)}`);
  }
  try {
    return { ...value };
  } catch (err) {
    throw new StowageError("INVALID_INPUT", `${what} could not be read: ${(err as Error)?.message ?? err}`, {
      cause: err,
    });
  }
}
