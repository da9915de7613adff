// `pnpm test` runs this before the suites (`--reset`: forget the last run's durations) and after
// them: it prints the ten slowest test files of the run, from what durations-reporter.ts wrote.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DURATIONS_DIR } from "./durations-dir.ts";

const SHOWN = 10;

if (process.argv.includes("--reset")) {
  rmSync(DURATIONS_DIR, { recursive: true, force: true });
} else {
  const files = existsSync(DURATIONS_DIR)
    ? readdirSync(DURATIONS_DIR).flatMap(
        (name) =>
          JSON.parse(readFileSync(join(DURATIONS_DIR, name), "utf8")) as { file: string; ms: number }[],
      )
    : [];
  files.sort((a, b) => b.ms - a.ms);
  const total = files.reduce((sum, file) => sum + file.ms, 0);
  console.log(
    `\nThe ${Math.min(SHOWN, files.length)} slowest of ${files.length} test files (${(total / 1000).toFixed(0)} s of test time in all, packages in parallel):`,
  );
  for (const { file, ms } of files.slice(0, SHOWN)) {
    console.log(`  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file}`);
  }
}
