import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";

/**
 * Lists keys through `wrap(inner)`, a store over a memory store, after putting `a/1`, `a/2` and
 * `b/1` through it, and records which listing of the inner store each listing took: a wrapper
 * whose keys are the inner store's should pass the names-only listing through (`keys`), not read
 * every item (`iterate`: a stat of every file on the file system).
 */
export async function keysThroughWrapper(wrap: (inner: ObjectStore) => ObjectStore) {
  const inner = createMemoryObjectStore();
  const calls: string[] = [];
  const store = wrap({
    ...inner,
    iterate: (options) => {
      calls.push("iterate");
      return inner.iterate(options);
    },
    keys: (options) => {
      calls.push("keys");
      return inner.keys(options);
    },
  });
  for (const key of ["a/1", "a/2", "b/1"]) await store.put(key, new TextEncoder().encode(key));
  const keys: string[] = [];
  for await (const key of store.keys({ prefix: "a/" })) keys.push(key);
  const pages: (readonly string[])[] = [];
  for await (const page of store.keys({ pageSize: 2 }).byPage()) pages.push(page);
  return { calls, keys, pages };
}
