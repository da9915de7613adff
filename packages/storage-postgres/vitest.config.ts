import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

export default stowageVitestConfig({ testTimeout: 60_000 });
