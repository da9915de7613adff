import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

// Two workers: the real agent CLIs' files wait on their CLIs for minutes, and this package's files
// were the longest lane of `pnpm test`. Isolated: these files set process.env.CLAUDE_CONFIG_DIR as
// they load, for the Agent SDK's helpers that read it once, each to a directory of its own.
export default stowageVitestConfig({
  maxWorkers: 2,
  isolatedFiles: [
    "test/archive/agent-sdk-compat.test.ts",
    "test/session-store/object-session-store.test.ts",
    "test/session-store/session-store-payloads.test.ts",
    "test/session-store-resume.int.test.ts",
  ],
  // The app's migrated embedded database, copied into the data directory of each `stowage` run
  // of the end-to-end tests (test/agent-stowage-cli.ts).
  globalSetup: ["../storage-postgres/test/support/embedded-database-template.ts"],
});
