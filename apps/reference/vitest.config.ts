import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

// Many tests start the app (embedded PGlite, migrations) or the CLI as a child process: 20–30 s
// each when the other packages' suites share the 2 cores, so 30 s is too tight.
export default stowageVitestConfig({ testTimeout: 120_000 });
