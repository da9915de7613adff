import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Where each package's test-file durations of the last `pnpm test` are kept. */
export const DURATIONS_DIR = join(REPO_ROOT, "node_modules", ".cache", "stowage-test-durations");
