import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { parseBearerToken } from "../src/bearer-token.js";

describe("parseBearerToken", () => {
  it("parses Bearer headers", async () => {
    expect(parseBearerToken("Bearer abc.def")).toBe("abc.def");
    expect(parseBearerToken("bearer   abc ")).toBe("abc");
    for (const header of [
      undefined,
      null,
      "",
      "abc",
      "Basic dXNlcjpwYXNz",
      "Bearer",
      "Bearer ",
      "Bearer a b",
      "Bearer a\u0000b",
      "Bearer é",
      `Bearer ${"x".repeat(300)}`,
      ["Bearer abc"],
    ]) {
      await expectStowageError(() => parseBearerToken(header), "UNAUTHORIZED");
    }
  });
});
