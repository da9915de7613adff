import { stowageVitestConfig } from "../vitest.shared.ts";

// A real CLI run against the mock takes seconds on a quiet machine and up to ten times that in CI,
// where every suite shares two cores (each run is bounded by REAL_CLI_RUN_TIMEOUT_MS, 5 min; a
// test makes two); an install on a cold cache takes up to minutes.
export default stowageVitestConfig({ testTimeout: 600_000 });
