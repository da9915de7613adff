import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

// Isolated: these files set process.env.CLAUDE_CONFIG_DIR as they load, for the Agent SDK's
// helpers that read it once, each to a directory of its own.
export default stowageVitestConfig({
  isolatedFiles: [
    "test/sessions/session-store.test.ts",
    "test/sessions/session-store-append-ahead.test.ts",
    "test/sessions/session-store-payloads.test.ts",
    "test/sessions/session-store-sealed.test.ts",
  ],
  // One migrated embedded database per run, which each test file's in-memory database loads as a
  // dump and the lock tests copy as a data directory (test/support/embedded-database-template.ts).
  globalSetup: ["test/support/embedded-database-template.ts"],
});
