import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Where each package's summary of the last `pnpm test` (file durations, failures) is kept. */
export const SUMMARY_DIR = join(REPO_ROOT, "node_modules", ".cache", "stowage-test-summary");

/** What `summary-reporter.ts` writes per package and `print-summary.ts` reads. */
export interface PackageTestSummary {
  /** Each file's wall-clock duration and CPU time (its worker's and its waited-for children's). */
  files: { file: string; ms: number; cpuMs: number }[];
  failures: TestFailure[];
}

/** One failed test, a failed file (an error outside its tests) or an unhandled error. */
export interface TestFailure {
  /** `<file> > <suite> > <test>`, or `<file>` for an error outside a test, or `unhandled`. */
  where: string;
  /** The error's message and the first lines of its stack, cut to a few lines. */
  errors: string[];
}

declare module "vitest" {
  interface TaskMeta {
    /** CPU milliseconds of a test file's worker and of the child processes it waited for (file-cpu.ts). */
    cpuMs?: number;
  }
}
