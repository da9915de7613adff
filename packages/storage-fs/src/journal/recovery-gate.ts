/**
 * Holds a store's operations until its journal recovery has finished (started at once, when the
 * store is made): a read must never see a file the recovery is about to repair. Once it has
 * succeeded `ready()` answers `undefined` and costs nothing more. A failed recovery fails the
 * operations waiting on it, loudly, and the next operation tries again.
 */
export function createRecoveryGate(recover: () => Promise<unknown>): () => Promise<void> | undefined {
  let done = false;
  let attempt: Promise<void> | undefined;
  const run = (): Promise<void> => {
    const current = recover().then(
      () => {
        done = true;
      },
      (err: unknown) => {
        attempt = undefined;
        throw err;
      },
    );
    // Nobody may be waiting yet: a failure is reported to the operations that ask, not as unhandled.
    current.catch(() => {});
    attempt = current;
    return current;
  };
  run();
  return () => (done ? undefined : (attempt ?? run()));
}

/** `operation`, run once `ready()` has nothing left to wait for. */
export function afterReady<A extends unknown[], R>(
  ready: () => Promise<void> | undefined,
  operation: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return (...args) => {
    const waiting = ready();
    return waiting ? waiting.then(() => operation(...args)) : operation(...args);
  };
}

/** The same for a listing: its first item waits for `ready()`. */
export function iterateAfterReady<A extends unknown[], T>(
  ready: () => Promise<void> | undefined,
  iterate: (...args: A) => AsyncIterable<T>,
): (...args: A) => AsyncIterable<T> {
  return (...args) => {
    const waiting = ready();
    if (!waiting) return iterate(...args);
    return (async function* () {
      await waiting;
      yield* iterate(...args);
    })();
  };
}
