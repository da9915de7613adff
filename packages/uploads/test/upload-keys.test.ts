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
  uploadsTrashMarkKey,
  uploadsTrashMarkParts,
  uploadsTrashMarksPrefix,
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
    // A trash mark's key is refused for such an id as owner, session or author alike.
    const at = new Date(1_700_000_000_000);
    await expectStowageError(
      () => uploadsTrashMarksPrefix({ kind: "user", id: value as string }, "s1"),
      "INVALID_INPUT",
    );
    await expectStowageError(
      () => uploadsTrashMarkKey({ kind: "user", id: "u1" }, value as string, at, "key:k1"),
      "INVALID_INPUT",
    );
    await expectStowageError(
      () => uploadsTrashMarkKey({ kind: "org", id: value as string }, "s1", at, "key:k1"),
      "INVALID_INPUT",
    );
    await expectStowageError(
      () => uploadsTrashMarkKey({ kind: "user", id: "u1" }, "s1", at, value as string),
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
  it("gives each deletion's trash mark a key of its own in the session's folder, sorted by time", () => {
    const owner = { kind: "org", id: "acme" } as const;
    expect(uploadsTrashMarksPrefix(owner, "s1")).toBe("upload-trash/org/acme/s1/");
    // Outside `sessions/`: no listing, quota or sweep of the session's tree sees a mark.
    expect(uploadsTrashMarksPrefix(owner, "s1").startsWith(sessionPrefix(owner, "s1"))).toBe(false);
    expect(uploadsTrashMarksPrefix(owner, "s10").startsWith(uploadsTrashMarksPrefix(owner, "s1"))).toBe(
      false,
    );
    const first = uploadsTrashMarkKey(owner, "s1", new Date(999), "key:k1");
    const again = uploadsTrashMarkKey(owner, "s1", new Date(999), "key:k1");
    const later = uploadsTrashMarkKey(owner, "s1", new Date(1_700_000_000_000), "a");
    expect(first).toMatch(/^upload-trash\/org\/acme\/s1\/0000000000000999-[0-9a-f]{16}-key:k1\.json$/);
    expect(again).not.toBe(first);
    expect([later, first].sort()).toEqual([first, later]);
    expect(uploadsTrashMarkParts(first)).toEqual({
      owner,
      sessionId: "s1",
      at: new Date(999),
      by: "key:k1",
    });
    // An author whose id ends like the name does is read back whole.
    const odd = uploadsTrashMarkKey(owner, "s1", new Date(5), "x.json");
    expect(uploadsTrashMarkParts(odd)?.by).toBe("x.json");
  });

  it.each([
    [-1, "before 1970"],
    [Number.NaN, "an invalid date"],
  ])("refuses a trash mark at %j (%s)", async (ms) => {
    await expectStowageError(
      () => uploadsTrashMarkKey({ kind: "user", id: "u1" }, "s1", new Date(ms), "key:k1"),
      "INVALID_INPUT",
    );
  });

  it.each([
    ["upload-trash/user/alice/s1.json", "a single mark of the old layout"],
    ["upload-trash/user/alice/s1/../x.json", "traversal"],
    ["upload-trash/user/alice/s1/..", "a parent directory"],
    ["upload-trash/user/../s1/0000000000000001-0123456789abcdef-key:k1.json", "traversal as the owner"],
    ["upload-trash/team/alice/s1/0000000000000001-0123456789abcdef-key:k1.json", "another kind"],
    ["upload-trash/user/.alice/s1/0000000000000001-0123456789abcdef-key:k1.json", "a hidden owner"],
    ["upload-trash/user/alice/s1/x/0000000000000001-0123456789abcdef-key:k1.json", "one level deeper"],
    ["upload-trash/user/alice/0000000000000001-0123456789abcdef-key:k1.json", "one level up"],
    ["upload-trash/user/alice/s1/0000000000000001-0123456789abcdef-key:k1.txt", "not JSON"],
    ["upload-trash/user/alice/s1/0000000000000001-0123456789abcdef-key:k1.json/", "a folder"],
    ["upload-trash/user/alice/s1/1-0123456789abcdef-key:k1.json", "a time not 16 digits wide"],
    ["upload-trash/user/alice/s1/9999999999999999-0123456789abcdef-key:k1.json", "a time no date holds"],
    ["upload-trash/user/alice/s1/0000000000000001-0123456789ABCDEF-key:k1.json", "an upper-case random part"],
    ["upload-trash/user/alice/s1/0000000000000001-0123456789abcdef-.json", "no author"],
    ["upload-trash/user/alice/s1/0000000000000001-0123456789abcdef--x.json", "an author not a safe id"],
    ["upload-trash/user/alice/s1/0000000000000001-0123456789abcdef-a b.json", "an author with a space"],
    ["sessions/user/alice/s1/0000000000000001-0123456789abcdef-key:k1.json", "outside upload-trash/"],
    ["upload-trash/", "the root itself"],
  ])("reads no trash mark from %j (%s)", (key) => {
    expect(uploadsTrashMarkParts(key)).toBeUndefined();
  });
});
