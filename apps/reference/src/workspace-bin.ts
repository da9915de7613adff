import { runStowageProcess } from "./cli/run-process.js";

// The repository's own `pnpm stowage` script (root package.json) and this package's `stowage` and
// `demo` scripts run this file, never a user's install (it is left out of the package). pnpm runs
// them in the workspace root (or this package's directory); INIT_CWD is where the user typed the
// command, the directory their relative paths mean.
await runStowageProcess(process.env.INIT_CWD || process.cwd());
