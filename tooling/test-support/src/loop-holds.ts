import { readdirSync, readFileSync } from "node:fs";

/**
 * Linux's scheduler figures of the calling thread: its CPU time, then the time it spent runnable
 * but waiting for a core (both in ns). The calling thread's, not the process's: V8's GC and
 * compiler threads work beside the event loop, and on two busy cores they made loop holds under
 * 100 ms read up to 270 ms of process CPU time.
 */
const THREAD_SCHEDSTAT = "/proc/thread-self/schedstat";

/** Every thread of this process, each with a schedstat file like the one above. */
const TASKS = "/proc/self/task";

interface Times {
  /** The calling thread's CPU time (ms). */
  cpuMs: number;
  /**
   * The time every thread of the process spent runnable, waiting for a core (ms): what a busy
   * machine adds, not the code. Every thread's, since the event loop also waits for V8's GC
   * helpers, and a helper that waits for a core keeps the main thread waiting off the CPU.
   */
  waitingForCoreMs: number;
}

/** CPU time the calling (main) thread has spent (ms); off Linux, the process's (an upper bound). */
export function mainThreadCpuMs(): number {
  try {
    return Number(readFileSync(THREAD_SCHEDSTAT, "utf8").split(" ")[0]) / 1e6;
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
}

/** Time the threads of this process have spent runnable but waiting for a core (ms); 0 off Linux. */
export function waitingForCoreMs(): number {
  let total = 0;
  try {
    for (const task of readdirSync(TASKS)) {
      try {
        total += Number(readFileSync(`${TASKS}/${task}/schedstat`, "utf8").split(" ")[1]) / 1e6;
      } catch {
        // A thread that ended between the listing and the read: it waits no more.
      }
    }
  } catch {
    return 0;
  }
  return total;
}

const times = (): Times => ({ cpuMs: mainThreadCpuMs(), waitingForCoreMs: waitingForCoreMs() });

/** What {@link watchLoopHolds} gives. */
export interface LoopHolds {
  /** The longest hold since the watch started or since the last `restart()` (ms of CPU time). */
  longest(): number;
  /**
   * The longest time the loop was held off the CPU without waiting for a core since the start or
   * the last `restart()` (ms): a synchronous wait in the kernel (a `*Sync` call, an fsync), which
   * CPU time does not see.
   */
  longestBlocked(): number;
  /** How long the process's threads waited for a core since the start or the last `restart()` (ms). */
  waitedForCores(): number;
  /** Forgets the holds seen so far. */
  restart(): void;
  stop(): void;
}

/**
 * Watches how long this process's event loop is held, between two ticks of a timer every
 * `resolutionMs`: the main thread's CPU time, and its time off the CPU beyond the timer's own wait
 * less what the process's threads waited for a core. Never plain wall time, so that waiting for a
 * core on a busy machine is not taken for a hold. Call it from the main thread.
 */
export function watchLoopHolds(resolutionMs: number): LoopHolds {
  let last = { ...times(), at: performance.now() };
  let startWait = last.waitingForCoreMs;
  let longest = 0;
  let longestBlocked = 0;
  const sample = () => {
    const now = { ...times(), at: performance.now() };
    const cpu = now.cpuMs - last.cpuMs;
    const waiting = now.waitingForCoreMs - last.waitingForCoreMs;
    longest = Math.max(longest, cpu);
    longestBlocked = Math.max(longestBlocked, now.at - last.at - cpu - waiting - resolutionMs);
    last = now;
  };
  const timer = setInterval(sample, resolutionMs);
  return {
    longest: () => Math.max(longest, mainThreadCpuMs() - last.cpuMs),
    longestBlocked: () => longestBlocked,
    waitedForCores: () => waitingForCoreMs() - startWait,
    restart() {
      sample();
      longest = 0;
      longestBlocked = 0;
      startWait = last.waitingForCoreMs;
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * The median main-thread CPU time (ms) of decoding and parsing a 14 MiB JSON body here, now: one
 * whole-body step no code can slice, the yardstick of a loop-hold bound. Measured where and when
 * the bound is used, it follows the machine (a slow core, a sibling busy with other tests'
 * work), so a bound of "N such parses" fails on work that grows, not on a slow or busy machine.
 */
export function jsonParseCostMs(): number {
  const output = "abcdefghij".repeat((14 * 1024 * 1024) / 10);
  const body = Buffer.from(JSON.stringify({ metadata: { type: "tool_result", tool: { output } } }));
  const costs: number[] = [];
  for (let run = 0; run < 5; run++) {
    const started = mainThreadCpuMs();
    JSON.parse(new TextDecoder().decode(body));
    costs.push(mainThreadCpuMs() - started);
  }
  return costs.sort((a, b) => a - b)[2]!;
}
