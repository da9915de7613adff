// `@stowage/sessions/testing` without vitest (an optional peer), as an npm user meets it: the
// import fails saying which entry needs it and what to install.
import { realpath, symlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isolatedSources } from "@stowage/test-support";
import { describe, expect, it } from "vitest";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
/** The registry packages sessions depends on (not peers): an npm user has them installed. */
const DEPENDENCIES = ["smol-toml", "jsonc-parser"];

describe("@stowage/sessions/testing without vitest", () => {
  it("fails naming this entry, not @stowage/core/testing, and says what to install", async () => {
    const project = await isolatedSources(["core", "blob-store", "sessions"]);
    for (const name of DEPENDENCIES) {
      const installed = await realpath(join(PACKAGE_DIR, "node_modules", name));
      await symlink(installed, join(project.dir, "node_modules", name), "dir");
    }
    const failure = await project.importEntry("@stowage/sessions/testing");
    expect(failure).toMatchObject({ code: "UNAVAILABLE", reason: "PEER_MISSING" });
    expect(failure.message).toContain("@stowage/sessions/testing runs on vitest");
    expect(failure.message).toContain("npm install -D vitest");
    // The main entry needs no vitest.
    expect(await project.importEntry("@stowage/sessions")).toEqual({});
  });
});
