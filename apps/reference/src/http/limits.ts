import { StowageError } from "@stowage/core";
import type { Context } from "hono";

/** The bodyLimit answer: TOO_LARGE as JSON, like every other error. */
export function tooLarge(limitBytes: number) {
  return (c: Context) => {
    const error = new StowageError(
      "TOO_LARGE",
      `request body is larger than the limit of ${limitBytes} bytes`,
      {
        details: { limitBytes },
      },
    );
    return c.json({ error: error.toJSON() }, 413);
  };
}
