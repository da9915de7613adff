import { StowageError } from "@stowage/core";

/** The StowageError code a promise or call fails with, or "success". */
export async function codeOf(work: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof work === "function" ? work() : work);
    return "success";
  } catch (err) {
    return StowageError.is(err) ? err.code : `not a StowageError: ${String(err)}`;
  }
}

/** The StowageError a synchronous call throws (fails the test when it does not throw one). */
export function errorOf(call: () => unknown): StowageError {
  try {
    call();
  } catch (err) {
    if (StowageError.is(err)) return err;
    throw new Error(`expected a StowageError, got ${String(err)}`);
  }
  throw new Error("expected a StowageError, but the call succeeded");
}
