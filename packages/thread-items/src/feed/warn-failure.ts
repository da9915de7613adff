import { describeValue, type Logger } from "@stowage/core";
import type { ThreadRef } from "../log/thread-layout.js";

/** Reports `err` through `logger` for a failure the feeds survive (a listener, a notifier, a mark). */
export function warnFailure(
  logger: Logger,
  message: string,
  thread: ThreadRef,
  err: unknown,
  details: Record<string, unknown> = {},
): void {
  logger.warn(
    {
      jobId: thread.jobId,
      alias: thread.alias,
      ...details,
      error: err instanceof Error ? err.message : describeValue(err),
    },
    message,
  );
}
