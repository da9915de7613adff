import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";
import { DURATIONS_DIR, REPO_ROOT } from "./durations-dir.ts";

/**
 * A vitest reporter that writes each test file's duration (tests and hooks) to
 * `node_modules/.cache/stowage-test-durations/<package>.json`, for `slowest-tests.ts` to rank once
 * every package's suite has run.
 */
export function durationsReporter(packageDir: string): Reporter {
  return {
    onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
      const files = testModules.map((module) => ({
        file: relative(REPO_ROOT, module.moduleId),
        ms: Math.round(module.diagnostic().duration),
      }));
      mkdirSync(DURATIONS_DIR, { recursive: true });
      const name = relative(REPO_ROOT, packageDir).replaceAll("/", "+");
      writeFileSync(join(DURATIONS_DIR, `${name}.json`), `${JSON.stringify(files)}\n`);
    },
  };
}
