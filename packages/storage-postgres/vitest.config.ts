import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

// Isolated: several files set process.env.CLAUDE_CONFIG_DIR as they load, for the Agent SDK's
// helpers that read it, each to a directory of its own.
export default stowageVitestConfig({ isolate: true });
