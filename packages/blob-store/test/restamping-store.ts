import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import type { Hook } from "./hooked-store.js";

/**
 * A memory store whose `move` works as S3's does: the bytes are copied (the copy is stamped now),
 * then the source is deleted; it declares `moveKeepsLastModified: false`. `betweenCopyAndDelete`
 * puts another writer's steps into the gap between the two requests.
 */
export function restampingStore(): { store: ObjectStore; hooks: { betweenCopyAndDelete?: Hook } } {
  const inner = createMemoryObjectStore();
  const hooks: { betweenCopyAndDelete?: Hook } = {};
  const store: ObjectStore = {
    ...inner,
    capabilities: { ...inner.capabilities, moveKeepsLastModified: false },
    async move(from, to, options) {
      const body = await inner.get(from);
      if (!body) return inner.move(from, to, options);
      const result = await inner.put(to, body, options);
      await hooks.betweenCopyAndDelete?.(from);
      await inner.delete(from);
      return result;
    },
  };
  return { store, hooks };
}
