import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { summaryReporter } from "./test-summary/summary-reporter.ts";

const DEFAULT_TEST_TIMEOUT_MS = 120_000;

/**
 * One test configuration for every package: tests run against `src/` through the
 * `@stowage/source` export condition, so `pnpm test` needs no build.
 */

export function stowageVitestConfig(
  overrides: { testTimeout?: number; isolate?: boolean; maxWorkers?: number } = {},
) {
  // Vitest hands these conditions to Node for external packages too, so only add what Node's own
  // resolution would: "module" would pick ESM builds Node cannot load (the AWS SDK's dist-es), and
  // "import" would make CommonJS `require`s (pg → pg-pool) load ESM builds. Vite adds import or
  // require by itself.
  const conditions = ["@stowage/source", "node", "default"];
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ["@stowage/source"] } },
    test: {
      include: ["test/**/*.test.ts"],
      // 120 s: real processes and servers share 2 cores with the other packages' suites in CI,
      // where a test of 30 s on a quiet run took twice that on a loaded one. The bound only
      // catches hangs: a passing test never waits for it.
      testTimeout: overrides.testTimeout ?? DEFAULT_TEST_TIMEOUT_MS,
      // Set-up hooks start the same servers and processes the tests do: the same bound.
      hookTimeout: Math.max(DEFAULT_TEST_TIMEOUT_MS, overrides.testTimeout ?? 0),
      pool: "forks",
      // One module graph per worker, not one per test file: importing the app and its packages
      // again for every file was a fifth of the app's suite's CPU time (776 s → 619 s, and 645 s
      // → 481 s of wall time, with it off). A package whose files set process-wide state when
      // they load (process.env for an SDK that reads it once) passes `isolate: true`.
      isolate: overrides.isolate ?? false,
      // Vitest's default on two cores is one worker: a package's files one after another.
      ...(overrides.maxWorkers === undefined ? {} : { maxWorkers: overrides.maxWorkers }),
      // Each file's CPU time, for the summary (test-summary/file-cpu.ts).
      setupFiles: [fileURLToPath(new URL("./test-summary/file-cpu.ts", import.meta.url))],
      // Each file's duration and CPU time and each failure, which `pnpm test` prints at its end.
      reporters: ["default", summaryReporter(process.cwd())],
    },
  });
}
