import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

export default stowageVitestConfig();
