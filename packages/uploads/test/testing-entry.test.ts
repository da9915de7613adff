// `@stowage/uploads/testing` without vitest (an optional peer), as an npm user meets it: the
// import fails saying which entry needs it and what to install.
import { isolatedSources } from "@stowage/test-support";
import { describe, expect, it } from "vitest";

describe("@stowage/uploads/testing without vitest", () => {
  it("fails naming this entry, not @stowage/core/testing, and says what to install", async () => {
    const project = await isolatedSources(["core", "uploads"]);
    const failure = await project.importEntry("@stowage/uploads/testing");
    expect(failure).toMatchObject({ code: "UNAVAILABLE", reason: "PEER_MISSING" });
    expect(failure.message).toContain("@stowage/uploads/testing runs on vitest");
    expect(failure.message).toContain("npm install -D vitest");
    // The agent entry needs no vitest at all.
    expect(await project.importEntry("@stowage/uploads/agent")).toEqual({});
  });
});
