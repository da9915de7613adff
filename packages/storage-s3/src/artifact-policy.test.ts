import { StowageError, type StowageErrorCode } from "@stowage/core";
import { describe, expect, it } from "vitest";
import {
  artifactPolicyFromEnv,
  checkArtifact,
  contentTypeForFilename,
  createArtifactPolicy,
  DEFAULT_ARTIFACT_POLICY,
  DEFAULT_ARTIFACT_TYPES,
  MB,
  normalizeContentType,
} from "./artifact-policy.js";

function failure(action: () => unknown): { code: StowageErrorCode | "success"; reason?: string } {
  try {
    action();
    return { code: "success" };
  } catch (err) {
    if (!StowageError.is(err)) throw err;
    return { code: err.code, ...(err.reason ? { reason: err.reason } : {}) };
  }
}

describe("artifact policy", () => {
  it("has the issue's defaults", () => {
    expect(Object.keys(DEFAULT_ARTIFACT_POLICY.allowedTypes).sort()).toEqual([
      "avi",
      "csv",
      "gif",
      "html",
      "jpeg",
      "jpg",
      "json",
      "log",
      "mov",
      "mp4",
      "png",
      "txt",
      "webm",
      "webp",
      "xml",
    ]);
    expect(DEFAULT_ARTIFACT_POLICY.maxFileSizeBytes).toBe(50 * 1024 * 1024);
    expect(DEFAULT_ARTIFACT_POLICY.maxTotalSizeBytes).toBe(500 * 1024 * 1024);
    expect(Object.isFrozen(DEFAULT_ARTIFACT_POLICY)).toBe(true);
    expect(Object.isFrozen(DEFAULT_ARTIFACT_TYPES)).toBe(true);
  });

  it.each([
    ["shot.png", "image/png"],
    ["SHOT.PNG", "IMAGE/PNG"],
    ["photo.jpg", "image/jpeg"],
    ["photo.jpeg", "image/jpeg"],
    ["anim.gif", "image/gif"],
    ["pic.webp", "image/webp"],
    ["run.mp4", "video/mp4"],
    ["run.mov", "video/quicktime"],
    ["run.avi", "video/x-msvideo"],
    ["run.avi", "video/avi"],
    ["run.webm", "video/webm"],
    ["out.log", "text/plain"],
    ["out.log", "text/plain; charset=utf-8"],
    ["notes.txt", "text/plain;charset=UTF-8"],
    ["data.json", "application/json"],
    ["data.xml", "application/xml"],
    ["data.xml", "text/xml"],
    ["table.csv", "text/csv"],
    ["page.html", "text/html"],
  ])("accepts %j as %j", (filename, contentType) => {
    const checked = checkArtifact(DEFAULT_ARTIFACT_POLICY, { filename, contentType, fileSize: 10 });
    expect(checked.filename).toBe(filename);
    expect(checked.contentType).toBe(contentType.toLowerCase().replace(/\s*;\s*/, "; "));
  });

  it.each([
    ["tool.exe", "application/octet-stream", "FILE_TYPE_NOT_ALLOWED"],
    ["script.sh", "text/plain", "FILE_TYPE_NOT_ALLOWED"],
    ["shot.png.exe", "image/png", "FILE_TYPE_NOT_ALLOWED"],
    ["noextension", "text/plain", "FILE_TYPE_NOT_ALLOWED"],
    ["x.constructor", "text/plain", "FILE_TYPE_NOT_ALLOWED"],
    ["x.__proto__", "text/plain", "FILE_TYPE_NOT_ALLOWED"],
    ["x.toString", "text/plain", "FILE_TYPE_NOT_ALLOWED"],
    ["shot.png", "text/html", "CONTENT_TYPE_MISMATCH"],
    ["page.html", "image/png", "CONTENT_TYPE_MISMATCH"],
    ["shot.png", "image/png; name=x", "CONTENT_TYPE_MISMATCH"],
    ["shot.png", "image/png; charset=utf-8; x=y", "CONTENT_TYPE_MISMATCH"],
    ["shot.png", "image/png\r\nx-amz-acl: public-read", "CONTENT_TYPE_MISMATCH"],
    ["shot.png", "", "CONTENT_TYPE_MISMATCH"],
    ["shot.png", 5, "CONTENT_TYPE_MISMATCH"],
    ["shot.png", "image/*", "CONTENT_TYPE_MISMATCH"],
    ["../shot.png", "image/png", "INVALID_FILENAME"],
  ])("refuses %j sent as %j (%s)", (filename, contentType, reason) => {
    expect(
      failure(() => checkArtifact(DEFAULT_ARTIFACT_POLICY, { filename, contentType, fileSize: 10 })),
    ).toEqual({
      code: "INVALID_INPUT",
      reason,
    });
  });

  it.each([
    [-1, "INVALID_INPUT", "INVALID_FILE_SIZE"],
    [1.5, "INVALID_INPUT", "INVALID_FILE_SIZE"],
    [Number.NaN, "INVALID_INPUT", "INVALID_FILE_SIZE"],
    ["10", "INVALID_INPUT", "INVALID_FILE_SIZE"],
    [2 ** 60, "INVALID_INPUT", "INVALID_FILE_SIZE"],
    [50 * MB + 1, "TOO_LARGE", "FILE_TOO_LARGE"],
  ])("refuses the size %j", (fileSize, code, reason) => {
    expect(
      failure(() =>
        checkArtifact(DEFAULT_ARTIFACT_POLICY, { filename: "a.png", contentType: "image/png", fileSize }),
      ),
    ).toEqual({ code, reason });
  });

  it("accepts an empty file and one of exactly the limit", () => {
    for (const fileSize of [0, 50 * MB]) {
      expect(
        checkArtifact(DEFAULT_ARTIFACT_POLICY, { filename: "a.log", contentType: "text/plain", fileSize })
          .fileSize,
      ).toBe(fileSize);
    }
  });

  it("says what is accepted", () => {
    expect(() =>
      checkArtifact(DEFAULT_ARTIFACT_POLICY, { filename: "x.exe", contentType: "a/b", fileSize: 1 }),
    ).toThrow(/not allowed; allowed: \.png, \.jpg/);
    expect(() =>
      checkArtifact(DEFAULT_ARTIFACT_POLICY, { filename: "x.png", contentType: "text/html", fileSize: 1 }),
    ).toThrow(/does not match "\.png"; accepted: image\/png/);
    expect(() =>
      checkArtifact(DEFAULT_ARTIFACT_POLICY, {
        filename: "x.png",
        contentType: "image/png",
        fileSize: 60 * MB,
      }),
    ).toThrow("file size 60.0 MB (62914560 bytes) exceeds the maximum of 50.0 MB (52428800 bytes) per file");
  });

  it("is configurable, and validates its configuration", () => {
    const policy = createArtifactPolicy({
      allowedTypes: { pdf: ["application/pdf"] },
      maxFileSizeBytes: 100,
    });
    expect(
      checkArtifact(policy, { filename: "a.pdf", contentType: "application/pdf", fileSize: 100 }).extension,
    ).toBe("pdf");
    expect(
      failure(() => checkArtifact(policy, { filename: "a.png", contentType: "image/png", fileSize: 1 })).code,
    ).toBe("INVALID_INPUT");
    expect(
      failure(() =>
        checkArtifact(policy, { filename: "a.pdf", contentType: "application/pdf", fileSize: 101 }),
      ).code,
    ).toBe("TOO_LARGE");
    for (const bad of [
      { allowedTypes: {} },
      { allowedTypes: { ".png": ["image/png"] } },
      { allowedTypes: { PNG: ["image/png"] } },
      { allowedTypes: { png: [] } },
      { allowedTypes: { png: ["image/png; charset=x"] } },
      { allowedTypes: { png: "image/png" } },
      { maxFileSizeBytes: 0 },
      { maxTotalSizeBytes: -1 },
      { maxFileSizeBytes: 1.5 },
      { maxFilenameBytes: 1000 },
    ]) {
      expect(failure(() => createArtifactPolicy(bad as never)).code).toBe("INVALID_INPUT");
    }
  });

  it("reads ARTIFACT_MAX_FILE_SIZE_MB and ARTIFACT_MAX_TOTAL_SIZE_MB", () => {
    const policy = artifactPolicyFromEnv({
      ARTIFACT_MAX_FILE_SIZE_MB: "10",
      ARTIFACT_MAX_TOTAL_SIZE_MB: "100.5",
    });
    expect(policy.maxFileSizeBytes).toBe(10 * MB);
    expect(policy.maxTotalSizeBytes).toBe(Math.floor(100.5 * MB));
    expect(artifactPolicyFromEnv({ ARTIFACT_MAX_FILE_SIZE_MB: "" }).maxFileSizeBytes).toBe(50 * MB);
    for (const raw of ["0", "-1", "ten", "1e3", "Infinity", " "]) {
      expect(failure(() => artifactPolicyFromEnv({ ARTIFACT_MAX_FILE_SIZE_MB: raw })).code).toBe(
        "INVALID_INPUT",
      );
    }
  });

  it("names the content type an uploader sends", () => {
    expect(contentTypeForFilename(DEFAULT_ARTIFACT_POLICY, "a.PNG")).toBe("image/png");
    expect(contentTypeForFilename(DEFAULT_ARTIFACT_POLICY, "a.avi")).toBe("video/x-msvideo");
    expect(contentTypeForFilename(DEFAULT_ARTIFACT_POLICY, "a.exe")).toBeUndefined();
    expect(contentTypeForFilename(DEFAULT_ARTIFACT_POLICY, "../a.png")).toBeUndefined();
    expect(contentTypeForFilename(DEFAULT_ARTIFACT_POLICY, "a.constructor")).toBeUndefined();
  });

  it("normalizes content types", () => {
    expect(normalizeContentType(" Text/Plain ; Charset=UTF-8 ")).toBe("text/plain; charset=utf-8");
    expect(normalizeContentType('text/plain; charset="utf-8"')).toBe("text/plain; charset=utf-8");
    expect(normalizeContentType("text/plain; boundary=x")).toBeUndefined();
    expect(normalizeContentType("x".repeat(300))).toBeUndefined();
  });
});
