// `artifacts` in paths and keys below is the design document's wire name (the API paths and the
// S3 layout `sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`).
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import {
  sessionKeyParts,
  sessionPrefix,
  uploadKey,
  uploadRecordsPrefix,
  uploadsPrefix,
} from "../src/upload-keys.js";

describe("upload key layout", () => {
  it("puts user and org sessions under their own trees", () => {
    expect(uploadKey({ kind: "user", id: "u1" }, "s-1", "shot.png")).toBe(
      "sessions/user/u1/s-1/artifacts/shot.png",
    );
    expect(uploadKey({ kind: "org", id: "acme" }, "s-1", "shot.png")).toBe(
      "sessions/org/acme/s-1/artifacts/shot.png",
    );
  });

  it("keeps uploads in a folder beside session.json and diff.txt", () => {
    const owner = { kind: "user", id: "u1" } as const;
    expect(sessionPrefix(owner, "s1")).toBe("sessions/user/u1/s1/");
    expect(uploadsPrefix(owner, "s1")).toBe("sessions/user/u1/s1/artifacts/");
    // The session's own files are outside the uploads prefix, so no upload key can reach them.
    expect(`${sessionPrefix(owner, "s1")}session.json`.startsWith(uploadsPrefix(owner, "s1"))).toBe(false);
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
    ["x".repeat(129), "longer than 128 characters"],
    [42, "a number"],
    [null, "null"],
  ] as [unknown, string][])("rejects the id %j (%s)", async (value) => {
    await expectStowageError(
      () => sessionPrefix({ kind: "user", id: "u1" }, value as string),
      "INVALID_INPUT",
    );
    await expectStowageError(
      () => sessionPrefix({ kind: "org", id: value as string }, "s1"),
      "INVALID_INPUT",
    );
    await expectStowageError(
      () => uploadKey({ kind: "org", id: "acme" }, value as string, "a.png"),
      "INVALID_INPUT",
    );
  });

  it.each([
    "abc",
    "A-1_b.c",
    "0",
    "550e8400-e29b-41d4-a716-446655440000",
    "org:acme",
    "alice@example.com",
    "x".repeat(128),
  ])("accepts the id %j", (value) => {
    expect(sessionPrefix({ kind: "user", id: value }, value)).toBe(`sessions/user/${value}/${value}/`);
  });

  it("keeps the records of an upload's URLs beside the uploads folder, never inside it", () => {
    const owner = { kind: "org", id: "acme" } as const;
    expect(uploadRecordsPrefix(owner, "s1", "shot.png")).toBe(
      "sessions/org/acme/s1/upload-records/shot.png/",
    );
    expect(uploadRecordsPrefix(owner, "s1", "shot.png").startsWith(uploadsPrefix(owner, "s1"))).toBe(false);
  });

  it("reads a key back into its session and place", () => {
    const acme = { kind: "org", id: "acme" };
    const scope = "sessions/org/acme/s1/";
    expect(sessionKeyParts("sessions/org/acme/s1/artifacts/shot.png")).toEqual({
      owner: acme,
      sessionId: "s1",
      scope,
      place: { folder: "uploads", filename: "shot.png" },
    });
    expect(sessionKeyParts("sessions/org/acme/s1/upload-records/shot.png/1-ab.json")).toEqual({
      owner: acme,
      sessionId: "s1",
      scope,
      place: { folder: "records", filename: "shot.png", name: "1-ab.json" },
    });
    for (const other of [
      "sessions/org/acme/s1/session.json",
      "sessions/org/acme/s1/artifacts/nested/deeper.png",
      "sessions/org/acme/s1/upload-records/shot.png",
      "sessions/org/acme/s1/upload-records/shot.png/a/b",
    ]) {
      expect(sessionKeyParts(other)?.place).toEqual({ folder: "other" });
    }
    for (const outside of [
      "blobs/ab/cd",
      "sessions/team/acme/s1/artifacts/a.png",
      "sessions/org/.acme/s1/artifacts/a.png",
      "sessions/org/acme",
      "sessions/org/acme/s1",
    ]) {
      expect(sessionKeyParts(outside)).toBeUndefined();
    }
  });
});
