import { execFileSync } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

// `gc` without starting Node with --expose-gc: the flag set at run time, the function taken from
// a new context (the flag only applies to contexts made after it).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/**
 * What every timed run starts from: dirty pages written back (`sync`, so a run does not pay for
 * the writes of the one before it, nor for another process's) and a full collection (so it does
 * not pay for the garbage an earlier run left).
 */
export function settleMachine(): void {
  try {
    execFileSync("sync", { stdio: "ignore" });
  } catch {
    // No `sync` binary (a minimal container): the collection still levels the runs.
  }
  gc();
}

/** The 1-minute load average, printed with every suite so a reader can judge how quiet the machine was. */
export function loadAverage(): string {
  const [one, five] = loadavg();
  return `load average ${one!.toFixed(2)} (1 min), ${five!.toFixed(2)} (5 min) on ${availableParallelism()} cores`;
}
