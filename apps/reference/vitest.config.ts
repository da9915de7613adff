import { stowageVitestConfig } from "../../tooling/vitest.shared.ts";

// Two workers (Vitest's default on two cores is one): the app's files were `pnpm test`'s longest
// lane, 836 s one after another; two at a time they took 582 s in the same run.
// Isolated: these files import the `undici` package, whose first import in a process makes its own
// Agent the dispatcher of Node's built-in `fetch` too (a process-wide symbol); a file after them in
// the same worker then sent its uploads through undici 7 from Node 20's fetch, which refused their
// content-length header ("fetch failed" in uploads, tenancy and trash tests, by the files' order).
export default stowageVitestConfig({
  maxWorkers: 2,
  isolatedFiles: ["test/event-loop-guard.test.ts", "test/json-budgets.test.ts"],
  // One migrated embedded database per run, copied into every test app's and CLI test's new data
  // directory (test/support/seed-embedded-database.ts).
  globalSetup: ["../../packages/storage-postgres/test/support/embedded-database-template.ts"],
});
