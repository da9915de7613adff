import { createRequire } from "node:module";
import { StowageError } from "@stowage/core";

// This entry's first import, and synchronous: the modules of `@stowage/core/testing` that it
// builds on load vitest as soon as they load and would name their own entry in the error. Checked
// here first, a missing vitest stops the import with this entry's name.
try {
  createRequire(import.meta.url).resolve("vitest");
} catch (cause) {
  throw new StowageError(
    "UNAVAILABLE",
    "@stowage/sessions/testing runs on vitest, an optional peer dependency that is not installed: npm install -D vitest",
    { cause, reason: "PEER_MISSING" },
  );
}
