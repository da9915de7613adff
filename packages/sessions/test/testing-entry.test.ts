// `@stowage/sessions/testing` without vitest (an optional peer), as an npm user meets it: the
// import fails saying which entry needs it and what to install.
import { isolatedSources } from "@stowage/test-support";
import { describe, expect, it } from "vitest";

describe("@stowage/sessions/testing without vitest", () => {
  it("fails naming this entry, not @stowage/core/testing, and says what to install", async () => {
    const project = await isolatedSources(["core", "blob-store", "sessions"]);
    const failure = await project.importEntry("@stowage/sessions/testing");
    expect(failure).toMatchObject({ code: "UNAVAILABLE", reason: "PEER_MISSING" });
    expect(failure.message).toContain("@stowage/sessions/testing runs on vitest");
    expect(failure.message).toContain("npm install -D vitest");
    // The main entry needs no vitest.
    expect(await project.importEntry("@stowage/sessions")).toEqual({});
  });
});
