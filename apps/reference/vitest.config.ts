import { defineConfig } from "vitest/config";
import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

// Two workers: the app's suite is the last lane of `pnpm test` (the other packages' suites end
// minutes earlier), and with one worker it left the second core idle for those minutes. Its files
// take ports from the system (port 0), their own temp directories and copies of one database
// template, so two at once share nothing (602 tests passed so, 2026-11-30).
const shared = stowageVitestConfig({ maxWorkers: 2 });
export default defineConfig({
  ...shared,
  // One migrated embedded database per run, copied by every test app (test/support/test-app.ts).
  test: { ...shared.test, globalSetup: ["test/support/embedded-database-template.ts"] },
});
