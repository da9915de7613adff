/** Runs tasks one after another per key; tasks of different keys run side by side. */
export interface KeyedQueue {
  /** Runs `task` once every task queued before it under `key` has settled; resolves or rejects with it. */
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
}

/** A queue that keeps no entry for a key once its last task has settled. */
export function createKeyedQueue(): KeyedQueue {
  const tails = new Map<string, Promise<void>>();
  return {
    run(key, task) {
      const result = (tails.get(key) ?? Promise.resolve()).then(task);
      const tail = result.then(
        () => {},
        () => {},
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
  };
}
