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
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(SWAP_LOOP, {
    eval: true,
    workerData: {
      directory: options.directory,
      outside: options.outside,
      flag,
      maxMs: options.maxMs ?? DEFAULT_MAX_SWAP_MS,
    },
  });
  const done = new Promise<number>((resolve, reject) => {
    worker.once("message", (swaps: number) => resolve(swaps));
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the swapper exited (${code}) before reporting`)));
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
