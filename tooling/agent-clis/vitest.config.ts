import { stowageVitestConfig } from "../vitest.shared.ts";

// A real CLI run against the mock takes seconds on a quiet machine and a few times that in CI,
// where every suite shares two cores; an install on a cold cache takes up to minutes.
export default stowageVitestConfig({ testTimeout: 300_000 });
