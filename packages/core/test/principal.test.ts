import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { assertPrincipal, samePrincipal } from "../src/principal.js";

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

  it("compares by kind and id", () => {
    expect(samePrincipal({ kind: "user", id: "a" }, { kind: "user", id: "a" })).toBe(true);
    expect(samePrincipal({ kind: "user", id: "a" }, { kind: "org", id: "a" })).toBe(false);
    expect(samePrincipal({ kind: "user", id: "a" }, { kind: "user", id: "b" })).toBe(false);
  });
});
