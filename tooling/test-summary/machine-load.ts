import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "./summary-dir.ts";

// What the machine did over a `pnpm test` run, so that a run's length can be judged against the
// machine it ran on: the same suite took 8 min on one 2-core machine and 21.5 min on another of the
// same kind, a day apart, each CPU-bound (its cores idle for under 2% of the run).

/** Where `--reset` keeps the machine's state at the run's start (beside, not in, the summaries). */
const START_FILE = join(REPO_ROOT, "node_modules", ".cache", "stowage-test-run-start.json");

interface MachineSnapshot {
  atMs: number;
  /** Jiffies (1/100 s) of all cores from /proc/stat: busy (not idle or waiting for I/O), idle. */
  busy: number;
  idle: number;
}

/** The machine's CPU counters now, or undefined where /proc/stat is not (not Linux). */
function snapshot(): MachineSnapshot | undefined {
  if (!existsSync("/proc/stat")) return undefined;
  const fields = readFileSync("/proc/stat", "utf8")
    .split("\n", 1)[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  // user nice system idle iowait irq softirq steal ...
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  return { atMs: Date.now(), busy: user + nice + system + irq + softirq + steal, idle: idle + iowait };
}

/**
 * A fixed piece of JavaScript work, timed: how fast this machine runs this suite's kind of code
 * (one core, ~0.3 s on the slower machine above). Two runs' lengths compare only next to it.
 */
function referenceWorkMs(): number {
  const start = process.hrtime.bigint();
  let x = 0;
  for (let i = 0; i < 50_000_000; i++) x = (x * 31 + i) | 0;
  if (x === 0.5) console.log(x);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** At the run's start: the counters and the reference work's time, kept for {@link printMachineLoad}. */
export function recordMachineStart(): void {
  const start = snapshot();
  if (!start) return;
  // A fresh clone has no node_modules/.cache before its first run.
  mkdirSync(dirname(START_FILE), { recursive: true });
  writeFileSync(START_FILE, JSON.stringify({ ...start, referenceMs: referenceWorkMs() }));
}

/** At the run's end: its wall time, how busy the cores were over it, and the reference work's time. */
export function printMachineLoad(): void {
  const end = snapshot();
  if (!end || !existsSync(START_FILE)) return;
  const start = JSON.parse(readFileSync(START_FILE, "utf8")) as MachineSnapshot & { referenceMs: number };
  const seconds = (jiffies: number) => (jiffies / 100).toFixed(0);
  const busy = end.busy - start.busy;
  const idle = end.idle - start.idle;
  console.log(
    `\nThe run took ${((end.atMs - start.atMs) / 1000).toFixed(0)} s; the machine's cores were busy ${seconds(busy)} s and idle ${seconds(idle)} s (${((100 * idle) / Math.max(1, busy + idle)).toFixed(0)}% idle); the reference work took ${start.referenceMs.toFixed(0)} ms before the run (machine-load.ts).`,
  );
}
