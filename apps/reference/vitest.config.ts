import { defineConfig } from "vitest/config";
import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

// Two workers (Vitest's default on two cores is one): the app's files were `pnpm test`'s longest
// lane, 836 s one after another; two at a time they took 582 s in the same run.
const shared = stowageVitestConfig({ maxWorkers: 2 });
export default defineConfig({
  ...shared,
  // One migrated embedded database per run, copied by every test app (test/support/test-app.ts).
  test: { ...shared.test, globalSetup: ["test/support/embedded-database-template.ts"] },
});
