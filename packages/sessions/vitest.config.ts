import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

// Isolated: several files set process.env.CLAUDE_CONFIG_DIR as they load, for the Agent SDK's
// helpers that read it, each to a directory of its own. Two workers: the real agent CLIs' files
// wait on their CLIs for minutes, and this package's files were the longest lane of `pnpm test`.
export default stowageVitestConfig({ isolate: true, maxWorkers: 2 });
