import type { ObjectStore } from "@stowage/core";

/** The ObjectStore operations a test can run code before. */
export type HookedOperation = "put" | "get" | "stream" | "head" | "delete" | "move" | "touch";

/** Runs before the operation on `key` (a move's source); may await another writer's steps. */
export type Hook = (key: string) => void | Promise<void>;

/**
 * `inner` with code injected before chosen operations, to put another writer's steps exactly
 * into the window a race needs. `hooks[op]` runs once per call until it is removed.
 */
export function hookedStore(inner: ObjectStore): {
  store: ObjectStore;
  hooks: Partial<Record<HookedOperation, Hook>>;
} {
  const hooks: Partial<Record<HookedOperation, Hook>> = {};
  const run = async (operation: HookedOperation, key: string) => {
    await hooks[operation]?.(key);
  };
  // Every operation takes its key (a move, its source) first.
  const hooked = <F extends (key: string, ...rest: never[]) => Promise<unknown>>(
    operation: HookedOperation,
    call: F,
  ): F =>
    (async (key: string, ...rest: never[]) => {
      await run(operation, key);
      return call(key, ...rest);
    }) as F;
  const store: ObjectStore = {
    ...inner,
    put: hooked("put", inner.put),
    get: hooked("get", inner.get),
    stream: hooked("stream", inner.stream),
    head: hooked("head", inner.head),
    delete: hooked("delete", inner.delete),
    move: hooked("move", inner.move),
    touch: hooked("touch", inner.touch),
  };
  return { store, hooks };
}

/** A hook that runs `step` the first time it sees `key()`, then never again. */
export function once(key: () => string, step: () => Promise<void>): Hook {
  let done = false;
  return async (seen) => {
    if (done || seen !== key()) return;
    done = true;
    await step();
  };
}
