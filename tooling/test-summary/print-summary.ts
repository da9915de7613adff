// `pnpm test` runs this before the suites (`--reset`: forget the last run's summaries) and after
// them: it prints the ten slowest test files of the run, then every failure with its error, from
// what summary-reporter.ts wrote, and how busy the machine was over the run (machine-load.ts), so
// that the end of the output (all a CI excerpt may show) says what failed and why.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { printMachineLoad, recordMachineStart } from "./machine-load.ts";
import { type PackageTestSummary, SUMMARY_DIR } from "./summary-dir.ts";

const SLOWEST_SHOWN = 10;
/** Failures printed in full; a run with more is broken in a way the first ones name. */
const FAILURES_SHOWN = 12;

if (process.argv.includes("--reset")) {
  rmSync(SUMMARY_DIR, { recursive: true, force: true });
  recordMachineStart();
} else {
  const summaries = existsSync(SUMMARY_DIR)
    ? readdirSync(SUMMARY_DIR).map(
        (name) => JSON.parse(readFileSync(join(SUMMARY_DIR, name), "utf8")) as PackageTestSummary,
      )
    : [];
  printSlowest(summaries.flatMap((summary) => summary.files));
  printMachineLoad();
  printFailures(summaries.flatMap((summary) => summary.failures));
}

function printSlowest(files: PackageTestSummary["files"]): void {
  const total = (key: "ms" | "cpuMs") => (files.reduce((sum, file) => sum + file[key], 0) / 1000).toFixed(0);
  const shown = Math.min(SLOWEST_SHOWN, files.length);
  console.log(
    `\nThe ${shown} slowest of ${files.length} test files (${total("ms")} s of test time in all, packages in parallel; ${total("cpuMs")} s of CPU):`,
  );
  console.log("     wall       CPU");
  printFiles([...files].sort((a, b) => b.ms - a.ms));
  // What a shorter run must cut: a file's wall time counts its waits for a core.
  console.log(`\nThe ${shown} costliest in CPU (the file's worker and the processes it waited for):`);
  printFiles([...files].sort((a, b) => b.cpuMs - a.cpuMs));
}

/** The first files of `sorted`, one line each: wall time, CPU time, path. */
function printFiles(sorted: PackageTestSummary["files"]): void {
  const seconds = (ms: number) => (ms / 1000).toFixed(1).padStart(7);
  for (const { file, ms, cpuMs } of sorted.slice(0, SLOWEST_SHOWN)) {
    console.log(`  ${seconds(ms)} s ${seconds(cpuMs)} s  ${file}`);
  }
}

function printFailures(failures: PackageTestSummary["failures"]): void {
  if (failures.length === 0) return;
  console.log(
    `\n${failures.length} failure(s)${failures.length > FAILURES_SHOWN ? `, the first ${FAILURES_SHOWN}` : ""}:`,
  );
  for (const { where, errors } of failures.slice(0, FAILURES_SHOWN)) {
    console.log(`\n✗ ${where}`);
    for (const error of errors) console.log(error.replace(/^/gm, "    "));
  }
}
