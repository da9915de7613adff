import { stowageVitestConfig } from "../vitest.shared.ts";

// A real CLI run against the mock takes seconds; an install on a cold cache up to minutes.
export default stowageVitestConfig({ testTimeout: 180_000 });
