import { defineConfig } from "vitest/config";
import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

const shared = stowageVitestConfig();
export default defineConfig({
  ...shared,
  // One migrated embedded database per run, copied by every test app (test/support/test-app.ts).
  test: { ...shared.test, globalSetup: ["test/support/embedded-database-template.ts"] },
});
