import { describeValue, StowageError } from "@stowage/core";
import type { ThreadItem } from "./schema/thread-item-schema.js";

/**
 * Drops the items whose `user_id` is `userId`: a consumer's own posts, echoed back when it reads
 * the thread. A human posting from the same account is dropped too; items without `user_id` stay.
 */
export function filterSelf<T extends Pick<ThreadItem, "user_id">>(items: readonly T[], userId: string): T[] {
  if (!Array.isArray(items)) {
    throw new StowageError(
      "INVALID_INPUT",
      `items must be an array of thread items, got ${describeValue(items)}`,
    );
  }
  if (typeof userId !== "string" || userId === "") {
    throw new StowageError(
      "INVALID_INPUT",
      `userId must be a non-empty string, got ${describeValue(userId)}`,
    );
  }
  return items.filter((item) => item?.user_id !== userId);
}
