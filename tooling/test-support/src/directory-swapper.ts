import { Worker } from "node:worker_threads";

/** How long a swapper runs at most when its test never stops it (a failed assertion, a crash). */
const DEFAULT_MAX_SWAP_MS = 30_000;

/**
 * The attacker's loop, in a worker thread so that it runs beside the opens (on another core)
 * instead of between them: the directory steps aside, a link out of the root takes its name, the
 * link goes, the directory comes back. Renames only, so each step is atomic; the directory is
 * back in place whenever the loop stops. Plain CommonJS: an eval worker loads nothing of ours.
 */
const SWAP_LOOP = `
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { directory, outside, flag, maxMs } = workerData;
const aside = directory + ".real";
const link = directory + ".link";
const stop = new Int32Array(flag);
fs.symlinkSync(outside, link);
const deadline = Date.now() + maxMs;
let swaps = 0;
while (Atomics.load(stop, 0) === 0 && Date.now() < deadline) {
  fs.renameSync(directory, aside);
  fs.renameSync(link, directory);
  fs.renameSync(directory, link);
  fs.renameSync(aside, directory);
  swaps++;
}
fs.unlinkSync(link);
parentPort.postMessage(swaps);
`;

/** A running swapper; `stop()` ends it and resolves with how many swaps it made. */
export interface DirectorySwapper {
  stop(): Promise<number>;
}

/** A loop running on a worker thread; `stop()` ends it and resolves with what it reported. */
export interface WorkerLoop<T> {
  stop(): Promise<T>;
}

/**
 * Runs `source` (plain CommonJS, evaluated in a worker thread, so that it runs beside the test on
 * another core) with `workerData` plus `flag`, a shared Int32 the loop must poll
 * (`Atomics.load(new Int32Array(flag), 0) === 0` while it may go on) and `maxMs`, after which it
 * must stop by itself (a test that never calls `stop()`: a failed assertion, a crash). The loop
 * posts one message, its report, when it ends.
 */
export function startWorkerLoop<T>(
  source: string,
  workerData: Record<string, unknown>,
  maxMs = DEFAULT_MAX_SWAP_MS,
): WorkerLoop<T> {
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(source, { eval: true, workerData: { ...workerData, flag, maxMs } });
  const done = new Promise<T>((resolve, reject) => {
    worker.once("message", (report: T) => resolve(report));
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the worker loop exited (${code}) before reporting`)));
  });
  // A rejection nobody awaits yet must not end the test run; stop() reports it.
  done.catch(() => {});
  return {
    async stop() {
      Atomics.store(new Int32Array(flag), 0, 1);
      try {
        return await done;
      } finally {
        await worker.terminate();
      }
    },
  };
}

/**
 * Swaps `directory` for a symbolic link to `outside` and back, in a tight loop on a worker thread,
 * until `stop()` (or `maxMs`, 30 s by default). For tests of openers that must never read through
 * a link below their root, however the path changes while they open it.
 */
export function startDirectorySwapper(options: {
  directory: string;
  outside: string;
  maxMs?: number;
}): DirectorySwapper {
  return startWorkerLoop<number>(
    SWAP_LOOP,
    { directory: options.directory, outside: options.outside },
    options.maxMs,
  );
}
