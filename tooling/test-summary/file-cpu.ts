// A setup file of every package's vitest run: it records the CPU time each test file cost (its
// worker's, and that of the processes it started and waited for: agent CLIs, tsx, tar), which
// summary-reporter.ts writes beside the file's duration. A file's duration counts the time it
// waited for a core while the other packages' suites ran; its CPU time is what it takes from the
// two cores whatever runs beside it, so it is what a shorter `pnpm test` must cut.
import { readFileSync } from "node:fs";
import { afterAll } from "vitest";
import type {} from "./summary-dir.ts";

/** Linux counts a process's CPU in clock ticks of 10 ms (USER_HZ, 100 on every Linux port). */
const MS_PER_TICK = 10;

/** This process's CPU plus its waited-for children's, in milliseconds (0 for children off Linux). */
function cpuMsNow(): number {
  const own = process.cpuUsage();
  return (own.user + own.system) / 1000 + childrenCpuMs();
}

function childrenCpuMs(): number {
  try {
    // Fields after the command name (in parentheses, which may hold spaces): cutime and cstime
    // are the 16th and 17th fields of the line, the 14th and 15th after the name.
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[13]) + Number(fields[14])) * MS_PER_TICK;
  } catch {
    return 0;
  }
}

// Set as vitest runs this setup file, before each test file is imported (it runs again for every
// file, isolated or not): a file's top-level work (installing a CLI, starting a server) counts.
const startedAt = cpuMsNow();
// biome-ignore lint/correctness/noEmptyPattern: vitest reads the first parameter's pattern for the fixtures a hook uses (none here); the file is the second.
afterAll(({}, suite) => {
  suite.meta.cpuMs = Math.round(cpuMsNow() - startedAt);
});
