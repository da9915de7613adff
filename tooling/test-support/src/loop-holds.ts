import { readFileSync } from "node:fs";

/** Linux's scheduler figures of the main thread (whose id is the process's): the first is its CPU time in ns. */
const MAIN_THREAD_SCHEDSTAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;

/**
 * CPU time the main thread has spent (ms). The main thread's, not the process's: V8's GC and
 * compiler threads work beside the event loop, and on two busy cores they made loop holds under
 * 100 ms read up to 270 ms of process CPU time. Off Linux, the process's (an upper bound).
 */
export function mainThreadCpuMs(): number {
  try {
    return Number(readFileSync(MAIN_THREAD_SCHEDSTAT, "utf8").split(" ")[0]) / 1e6;
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
}

/** What {@link watchLoopHolds} gives. */
export interface LoopHolds {
  /** The longest hold since the watch started or since the last `restart()` (ms of CPU time). */
  longest(): number;
  /** Forgets the holds seen so far. */
  restart(): void;
  stop(): void;
}

/**
 * Watches how long this process's event loop is held: the main thread's CPU time between two ticks
 * of a timer every `resolutionMs`. CPU time, not wall time, so that waiting for a core on a busy
 * machine is not taken for a hold.
 */
export function watchLoopHolds(resolutionMs: number): LoopHolds {
  let last = mainThreadCpuMs();
  let longest = 0;
  const timer = setInterval(() => {
    const now = mainThreadCpuMs();
    longest = Math.max(longest, now - last);
    last = now;
  }, resolutionMs);
  return {
    longest: () => Math.max(longest, mainThreadCpuMs() - last),
    restart() {
      longest = 0;
      last = mainThreadCpuMs();
    },
    stop: () => clearInterval(timer),
  };
}
