import { errorResponse, StowageError } from "@stowage/core";

/** The bodyLimit answer: TOO_LARGE in the one wire format, like every other error. */
export function tooLarge(limitBytes: number) {
  return () =>
    errorResponse(
      new StowageError("TOO_LARGE", `request body is larger than the limit of ${limitBytes} bytes`, {
        details: { limitBytes },
      }),
    );
}
