import { stowageVitestConfig } from "../vitest.shared.ts";

export default stowageVitestConfig();
