import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { summaryReporter } from "./test-summary/summary-reporter.ts";

const DEFAULT_TEST_TIMEOUT_MS = 120_000;
const TEST_FILES = ["test/**/*.test.ts"];

/**
 * One test configuration for every package: tests run against `src/` through the
 * `@stowage/source` export condition, so `pnpm test` needs no build.
 */

export function stowageVitestConfig(
  overrides: {
    testTimeout?: number;
    isolatedFiles?: readonly string[];
    maxWorkers?: number;
    /** The package's own global setups, run after the shared one (so in its temporary directory). */
    globalSetup?: readonly string[];
    /** Temporary directories on the system's own (a disk), for a package whose subject is the file system. */
    tempOnDisk?: boolean;
  } = {},
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
      // With `isolatedFiles`, each project says which files are its own (a project's `include`
      // would be added to this one, not replace it).
      ...(overrides.isolatedFiles === undefined ? { include: TEST_FILES } : {}),
      // 120 s: real processes and servers share 2 cores with the other packages' suites in CI,
      // where a test of 30 s on a quiet run took twice that on a loaded one. The bound only
      // catches hangs: a passing test never waits for it.
      testTimeout: overrides.testTimeout ?? DEFAULT_TEST_TIMEOUT_MS,
      // Set-up hooks start the same servers and processes the tests do: the same bound.
      hookTimeout: Math.max(DEFAULT_TEST_TIMEOUT_MS, overrides.testTimeout ?? 0),
      pool: "forks",
      // Temporary directories in memory where the system has a tmpfs (test-setup/temp-in-memory.ts).
      globalSetup: [
        ...(overrides.tempOnDisk
          ? []
          : [fileURLToPath(new URL("./test-setup/temp-in-memory.ts", import.meta.url))]),
        ...(overrides.globalSetup ?? []),
      ],
      // One module graph per worker, not one per test file: importing the app and its packages
      // again for every file was a fifth of the app's suite's CPU time (776 s → 619 s, and 645 s
      // → 481 s of wall time, with it off). Files that set process-wide state when they load
      // (process.env for an SDK that reads it once) are named in `isolatedFiles`: they run in a
      // project of their own, each in a new process.
      isolate: false,
      ...(overrides.isolatedFiles === undefined ? {} : isolatedProjects(overrides.isolatedFiles)),
      // Vitest's default on two cores is one worker: a package's files one after another.
      ...(overrides.maxWorkers === undefined ? {} : { maxWorkers: overrides.maxWorkers }),
      // Each file's CPU time, for the summary (test-summary/file-cpu.ts); byte arrays compared as
      // bytes (test-setup/byte-equality.ts).
      setupFiles: [
        fileURLToPath(new URL("./test-summary/file-cpu.ts", import.meta.url)),
        fileURLToPath(new URL("./test-setup/byte-equality.ts", import.meta.url)),
      ],
      // Each file's duration and CPU time and each failure, which `pnpm test` prints at its end.
      reporters: ["default", summaryReporter(process.cwd())],
    },
  });
}

/**
 * Two projects of one package: `files` (globs under the package) each in a process of its own,
 * every other file sharing its worker's module graph. Both inherit the package's configuration.
 */
function isolatedProjects(files: readonly string[]) {
  return {
    projects: [
      { extends: true as const, test: { name: "shared", include: TEST_FILES, exclude: [...files] } },
      { extends: true as const, test: { name: "isolated", include: [...files], isolate: true } },
    ],
  };
}
