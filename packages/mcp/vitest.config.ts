import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

// The real agent CLIs' files run each CLI against the mock: seconds on a quiet machine, up to ten
// times that in CI, where ~20 processes share 2 cores (each run bounded by agent-clis'
// REAL_CLI_RUN_TIMEOUT_MS, 5 min).
export default stowageVitestConfig({ testTimeout: 600_000 });
