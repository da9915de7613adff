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

/** How much new memory {@link newMemoryMs} touches, in chunks of 64 MiB. */
const NEW_MEMORY_CHUNKS = 4;
const CHUNK_BYTES = 64 * 1024 * 1024;

/**
 * Memory this process never had, written once, timed: what every process the suite starts pays
 * for its heap (tsx, the CLI, the agent CLIs, whose starts are a large part of the run). The
 * reference work above does not see it: on 2026-12-02 a machine that ran it at its usual speed
 * (297 ms) took 21 min for a suite of 8, its cores busy 2.6 times as long, and wrote new memory at
 * about 0.3 GB/s (3.2 GiB in 11-13 s): a page fault ten times dearer than usual.
 */
function newMemoryMs(): number {
  const start = process.hrtime.bigint();
  let sum = 0;
  for (let chunk = 0; chunk < NEW_MEMORY_CHUNKS; chunk++) sum += Buffer.alloc(CHUNK_BYTES, chunk + 1)[0]!;
  if (sum === 0) console.log(sum);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** At the run's start: the counters and the probes' times, kept for {@link printMachineLoad}. */
export function recordMachineStart(): void {
  const start = snapshot();
  if (!start) return;
  // A fresh clone has no node_modules/.cache before its first run.
  mkdirSync(dirname(START_FILE), { recursive: true });
  writeFileSync(
    START_FILE,
    JSON.stringify({ ...start, referenceMs: referenceWorkMs(), newMemoryMs: newMemoryMs() }),
  );
}

/** At the run's end: its wall time, how busy the cores were over it, and the reference work's time. */
export function printMachineLoad(): void {
  const end = snapshot();
  if (!end || !existsSync(START_FILE)) return;
  const start = JSON.parse(readFileSync(START_FILE, "utf8")) as MachineSnapshot & {
    referenceMs: number;
    newMemoryMs?: number;
  };
  const seconds = (jiffies: number) => (jiffies / 100).toFixed(0);
  const busy = end.busy - start.busy;
  const idle = end.idle - start.idle;
  console.log(
    `\nThe run took ${((end.atMs - start.atMs) / 1000).toFixed(0)} s; the machine's cores were busy ${seconds(busy)} s and idle ${seconds(idle)} s (${((100 * idle) / Math.max(1, busy + idle)).toFixed(0)}% idle); the reference work took ${start.referenceMs.toFixed(0)} ms before the run${start.newMemoryMs === undefined ? "" : ` and writing ${(NEW_MEMORY_CHUNKS * CHUNK_BYTES) / 2 ** 20} MiB of new memory ${start.newMemoryMs.toFixed(0)} ms`} (machine-load.ts).`,
  );
}
