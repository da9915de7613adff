import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { stripVTControlCharacters } from "node:util";
import type { Reporter, TestModule } from "vitest/node";
import { type PackageTestSummary, REPO_ROOT, SUMMARY_DIR, type TestFailure } from "./summary-dir.ts";

// What is kept of each error: enough to name the cause (a failed run's report sits in its message),
// short enough that the failures of a run fit in the tail of a CI log, all a CI excerpt may show.
const MESSAGE_LINES_KEPT = 40;
const DIFF_LINES_KEPT = 12;
const STACK_FRAMES_KEPT = 3;
const LINE_CHARS_KEPT = 300;

interface ReportedError {
  message?: string;
  stack?: string;
  name?: string;
  diff?: string;
}

/**
 * A vitest reporter that writes, per package, each test file's duration (tests and hooks) and each
 * failure with its error to `node_modules/.cache/stowage-test-summary/<package>.json`, for
 * `print-summary.ts` to print once every package's suite has run (in the runs `pnpm test`
 * starts): the failures then end the output of `pnpm test` instead of sitting among thousands of
 * lines of other packages' logs.
 */
export function summaryReporter(packageDir: string): Reporter {
  return {
    onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
      // Only the runs `pnpm test` starts (it sets this): a package's suite run by hand meanwhile
      // would otherwise overwrite that package's part of the summary with its own results.
      if (process.env.STOWAGE_TEST_SUMMARY !== "1") return;
      const summary: PackageTestSummary = {
        files: testModules.map((module) => ({
          file: relative(REPO_ROOT, module.moduleId),
          ms: Math.round(module.diagnostic().duration),
          cpuMs: module.meta().cpuMs ?? 0,
        })),
        failures: [
          ...testModules.flatMap(failuresOf),
          ...unhandledErrors.map((error) => ({
            where: "unhandled",
            errors: [describe(error as ReportedError)],
          })),
        ],
      };
      mkdirSync(SUMMARY_DIR, { recursive: true });
      const name = relative(REPO_ROOT, packageDir).replaceAll("/", "+");
      writeFileSync(join(SUMMARY_DIR, `${name}.json`), `${JSON.stringify(summary)}\n`);
    },
  };
}

function failuresOf(module: TestModule): TestFailure[] {
  const file = relative(REPO_ROOT, module.moduleId);
  const failures: TestFailure[] = [];
  // Errors outside any test: the file failed to load, or a file-level hook threw.
  if (module.errors().length > 0) {
    failures.push({ where: file, errors: module.errors().map(describe) });
  }
  for (const suite of module.children.allSuites()) {
    if (suite.errors().length > 0) {
      failures.push({ where: `${file} > ${suite.fullName}`, errors: suite.errors().map(describe) });
    }
  }
  for (const test of module.children.allTests("failed")) {
    failures.push({
      where: `${file} > ${test.fullName}`,
      errors: (test.result().errors ?? []).map(describe),
    });
  }
  return failures;
}

function describe(error: ReportedError): string {
  const message = `${error.name ?? "Error"}: ${error.message ?? String(error)}`;
  // The test's own frames, not vitest's nor a library's.
  const frames = (error.stack ?? "")
    .split("\n")
    .filter((line) => /^\s*at .*\//.test(line) && !line.includes("/node_modules/"));
  return [
    ...firstLines(message, MESSAGE_LINES_KEPT),
    ...(error.diff ? firstLines(error.diff, DIFF_LINES_KEPT) : []),
    ...frames.slice(0, STACK_FRAMES_KEPT),
  ].join("\n");
}

function firstLines(text: string, count: number): string[] {
  const lines = stripVTControlCharacters(text)
    .split("\n")
    .map((line) => (line.length > LINE_CHARS_KEPT ? `${line.slice(0, LINE_CHARS_KEPT)}…` : line));
  return lines.length > count ? [...lines.slice(0, count), `… ${lines.length - count} more lines`] : lines;
}
