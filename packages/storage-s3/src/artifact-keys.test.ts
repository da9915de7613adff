import { StowageError } from "@stowage/core";
import { describe, expect, it } from "vitest";
import {
  artifactKey,
  artifactsPrefix,
  assertArtifactId,
  assertPrincipal,
  idProblem,
  MAX_ID_LENGTH,
  samePrincipal,
  sessionPrefix,
} from "./artifact-keys.js";

const codeOf = (action: () => unknown) => {
  try {
    action();
    return "success";
  } catch (err) {
    return StowageError.is(err) ? err.code : String(err);
  }
};

describe("artifact key layout", () => {
  it("puts user and org sessions under their own trees", () => {
    expect(artifactKey({ kind: "user", id: "u1" }, "s-1", "shot.png")).toBe(
      "sessions/user/u1/s-1/artifacts/shot.png",
    );
    expect(artifactKey({ kind: "org", id: "acme" }, "s-1", "shot.png")).toBe(
      "sessions/org/acme/s-1/artifacts/shot.png",
    );
  });

  it("keeps artifacts in a folder beside session.json and diff.txt", () => {
    const owner = { kind: "user", id: "u1" } as const;
    expect(sessionPrefix(owner, "s1")).toBe("sessions/user/u1/s1/");
    expect(artifactsPrefix(owner, "s1")).toBe("sessions/user/u1/s1/artifacts/");
    // The session's own files are outside the artifacts prefix, so no artifact key can reach them.
    expect(`${sessionPrefix(owner, "s1")}session.json`.startsWith(artifactsPrefix(owner, "s1"))).toBe(false);
  });

  it("never lets one session's prefix contain another's", () => {
    const owner = { kind: "user", id: "u1" } as const;
    expect(sessionPrefix(owner, "s10").startsWith(sessionPrefix(owner, "s1"))).toBe(false);
    expect(sessionPrefix({ kind: "user", id: "u10" }, "s").startsWith("sessions/user/u1/")).toBe(false);
  });

  it.each([
    ["", "empty"],
    ["..", "parent directory"],
    [".", "dot"],
    ["../x", "traversal"],
    ["a/b", "slash"],
    ["a\\b", "backslash"],
    ["%2e%2e", "percent-encoded"],
    ["a\u0000", "NUL"],
    ["-x", "leading dash"],
    [".hidden", "leading dot"],
    ["a b", "space"],
    ["x".repeat(MAX_ID_LENGTH + 1), "too long"],
    [42, "a number"],
    [null, "null"],
  ] as [unknown, string][])("rejects the id %j (%s)", (value) => {
    expect(idProblem(value)).toEqual(expect.any(String));
    expect(codeOf(() => assertArtifactId(value, "sessionId"))).toBe("INVALID_INPUT");
    expect(codeOf(() => sessionPrefix({ kind: "user", id: "u1" }, value as string))).toBe("INVALID_INPUT");
    expect(codeOf(() => sessionPrefix({ kind: "org", id: value as string }, "s1"))).toBe("INVALID_INPUT");
  });

  it.each(["abc", "A-1_b.c", "0", "550e8400-e29b-41d4-a716-446655440000", "x".repeat(MAX_ID_LENGTH)])(
    "accepts the id %j",
    (value) => {
      expect(idProblem(value)).toBeUndefined();
    },
  );

  it("validates principals and compares them by kind and id", () => {
    for (const bad of [
      null,
      {},
      { kind: "admin", id: "x" },
      { kind: "user" },
      { kind: "user", id: "../x" },
      "user",
    ]) {
      expect(codeOf(() => assertPrincipal(bad))).toBe("INVALID_INPUT");
    }
    expect(samePrincipal({ kind: "user", id: "a" }, { kind: "user", id: "a" })).toBe(true);
    expect(samePrincipal({ kind: "user", id: "a" }, { kind: "org", id: "a" })).toBe(false);
    expect(samePrincipal({ kind: "user", id: "a" }, { kind: "user", id: "b" })).toBe(false);
  });
});
