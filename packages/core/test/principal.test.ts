import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { assertPrincipal } from "../src/principal.js";

describe("principals", () => {
  it.each([
    [null, "null"],
    [{}, "no kind"],
    [{ kind: "admin", id: "x" }, "another kind"],
    [{ kind: "user" }, "no id"],
    [{ kind: "user", id: "../x" }, "a traversal id"],
    [{ kind: "user", id: "" }, "an empty id"],
    ["user", "a string"],
  ] as [unknown, string][])("refuses %j (%s)", async (value) => {
    await expectStowageError(() => assertPrincipal(value), "INVALID_INPUT");
  });

  it("accepts a user and an org", () => {
    expect(() => assertPrincipal({ kind: "user", id: "alice" })).not.toThrow();
    expect(() => assertPrincipal({ kind: "org", id: "acme" })).not.toThrow();
  });
});
