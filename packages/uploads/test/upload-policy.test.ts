import type { StowageErrorCode } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import {
  checkUpload,
  contentTypeForFilename,
  createUploadPolicy,
  DEFAULT_UPLOAD_POLICY,
  DEFAULT_UPLOAD_TYPES,
  uploadPolicyOptionsFromEnv,
} from "../src/upload-policy.js";

const MIB = 1024 * 1024;

describe("upload policy", () => {
  it("has the issue's defaults", () => {
    expect(Object.keys(DEFAULT_UPLOAD_POLICY.allowedTypes).sort()).toEqual([
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
    expect(DEFAULT_UPLOAD_POLICY.maxFileSizeBytes).toBe(50 * 1024 * 1024);
    expect(DEFAULT_UPLOAD_POLICY.maxTotalSizeBytes).toBe(500 * 1024 * 1024);
    expect(Object.isFrozen(DEFAULT_UPLOAD_POLICY)).toBe(true);
    expect(Object.isFrozen(DEFAULT_UPLOAD_TYPES)).toBe(true);
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
    const checked = checkUpload(DEFAULT_UPLOAD_POLICY, { filename, contentType, fileSize: 10 });
    expect(checked.filename).toBe(filename);
    expect(checked.contentType).toBe(contentType.toLowerCase().replace(/\s*;\s*/, "; "));
  });

  it.each([
    ["tool.exe", "application/octet-stream", "FILE_TYPE_NOT_ALLOWED"],
    ["script.sh", "text/plain", "FILE_TYPE_NOT_ALLOWED"],
    ["shot.png.exe", "image/png", "FILE_TYPE_NOT_ALLOWED"],
    ["tool.exe", "image/png", "FILE_TYPE_NOT_ALLOWED"],
    ["TOOL.EXE", "IMAGE/PNG", "FILE_TYPE_NOT_ALLOWED"],
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
    ["shot.png", undefined, "CONTENT_TYPE_MISMATCH"],
    ["shot.png", null, "CONTENT_TYPE_MISMATCH"],
    ["SHOT.PNG", "Text/HTML", "CONTENT_TYPE_MISMATCH"],
    ["photo.jpg", "image/png", "CONTENT_TYPE_MISMATCH"],
    ["out.log", "text/plain; charset=utf-8; boundary=x", "CONTENT_TYPE_MISMATCH"],
    ["shot.png", 5, "CONTENT_TYPE_MISMATCH"],
    ["shot.png", "image/*", "CONTENT_TYPE_MISMATCH"],
    ["../shot.png", "image/png", "INVALID_FILENAME"],
  ])("refuses %j sent as %j (%s)", async (filename, contentType, reason) => {
    await expectStowageError(
      () => checkUpload(DEFAULT_UPLOAD_POLICY, { filename, contentType, fileSize: 10 }),
      "INVALID_INPUT",
      reason,
    );
  });

  it.each([
    [-1, "INVALID_INPUT", "INVALID_FILE_SIZE"],
    [1.5, "INVALID_INPUT", "INVALID_FILE_SIZE"],
    [Number.NaN, "INVALID_INPUT", "INVALID_FILE_SIZE"],
    ["10", "INVALID_INPUT", "INVALID_FILE_SIZE"],
    [2 ** 60, "INVALID_INPUT", "INVALID_FILE_SIZE"],
    [50 * MIB + 1, "TOO_LARGE", "FILE_TOO_LARGE"],
  ] as [unknown, StowageErrorCode, string][])("refuses the size %j", async (fileSize, code, reason) => {
    await expectStowageError(
      () => checkUpload(DEFAULT_UPLOAD_POLICY, { filename: "a.png", contentType: "image/png", fileSize }),
      code,
      reason,
    );
  });

  it("accepts an empty file and one of exactly the limit", () => {
    for (const fileSize of [0, 50 * MIB]) {
      expect(
        checkUpload(DEFAULT_UPLOAD_POLICY, { filename: "a.log", contentType: "text/plain", fileSize })
          .fileSize,
      ).toBe(fileSize);
    }
  });

  it("says what is accepted, in the error's details", async () => {
    const notAllowed = await expectStowageError(
      () => checkUpload(DEFAULT_UPLOAD_POLICY, { filename: "x.exe", contentType: "a/b", fileSize: 1 }),
      "INVALID_INPUT",
      "FILE_TYPE_NOT_ALLOWED",
    );
    expect(notAllowed.details).toEqual({
      extension: "exe",
      allowed: ["png", "jpg", "jpeg", "gif", "webp", "mp4", "mov", "avi", "webm"].concat([
        "log",
        "txt",
        "json",
        "xml",
        "csv",
        "html",
      ]),
    });
    const mismatch = await expectStowageError(
      () => checkUpload(DEFAULT_UPLOAD_POLICY, { filename: "x.png", contentType: "text/html", fileSize: 1 }),
      "INVALID_INPUT",
      "CONTENT_TYPE_MISMATCH",
    );
    expect(mismatch.details).toEqual({ extension: "png", accepted: ["image/png"] });
    const tooLarge = await expectStowageError(
      () =>
        checkUpload(DEFAULT_UPLOAD_POLICY, {
          filename: "x.png",
          contentType: "image/png",
          fileSize: 60 * MIB,
        }),
      "TOO_LARGE",
      "FILE_TOO_LARGE",
    );
    expect(tooLarge.details).toEqual({ fileSize: 62_914_560, limit: 52_428_800 });
  });

  it("is configurable, and validates its configuration", async () => {
    const policy = createUploadPolicy({
      allowedTypes: { pdf: ["application/pdf"] },
      maxFileSizeBytes: 100,
    });
    expect(
      checkUpload(policy, { filename: "a.pdf", contentType: "application/pdf", fileSize: 100 }).extension,
    ).toBe("pdf");
    await expectStowageError(
      () => checkUpload(policy, { filename: "a.png", contentType: "image/png", fileSize: 1 }),
      "INVALID_INPUT",
      "FILE_TYPE_NOT_ALLOWED",
    );
    await expectStowageError(
      () => checkUpload(policy, { filename: "a.pdf", contentType: "application/pdf", fileSize: 101 }),
      "TOO_LARGE",
      "FILE_TOO_LARGE",
    );
    for (const bad of [
      { allowedTypes: {} },
      { allowedTypes: { ".png": ["image/png"] } },
      { allowedTypes: { PNG: ["image/png"] } },
      { allowedTypes: { png: [] } },
      { allowedTypes: { png: ["image/png; charset=x"] } },
      { allowedTypes: { png: ["Image/PNG"] } },
      { allowedTypes: { png: ["image/*"] } },
      { allowedTypes: { png: "image/png" } },
      { maxFileSizeBytes: 0 },
      { maxTotalSizeBytes: -1 },
      { maxFileSizeBytes: 1.5 },
      { maxFilenameBytes: 1000 },
    ]) {
      await expectStowageError(() => createUploadPolicy(bad as never), "INVALID_INPUT");
    }
  });

  it("reads ARTIFACT_MAX_FILE_SIZE_MB and ARTIFACT_MAX_TOTAL_SIZE_MB, in MiB", async () => {
    expect(
      uploadPolicyOptionsFromEnv({ ARTIFACT_MAX_FILE_SIZE_MB: "10", ARTIFACT_MAX_TOTAL_SIZE_MB: "100.5" }),
    ).toEqual({ maxFileSizeBytes: 10_485_760, maxTotalSizeBytes: 105_381_888 });
    expect(uploadPolicyOptionsFromEnv({ ARTIFACT_MAX_TOTAL_SIZE_MB: "0.5" })).toEqual({
      maxTotalSizeBytes: 524_288,
    });
    // Unset and blank variables leave the defaults alone.
    expect(
      uploadPolicyOptionsFromEnv({ ARTIFACT_MAX_FILE_SIZE_MB: "", ARTIFACT_MAX_TOTAL_SIZE_MB: " " }),
    ).toEqual({});
    expect(createUploadPolicy(uploadPolicyOptionsFromEnv({})).maxFileSizeBytes).toBe(52_428_800);
    for (const raw of ["0", "-1", "ten", "1e3", "Infinity", "10MB"]) {
      const err = await expectStowageError(
        () => uploadPolicyOptionsFromEnv({ ARTIFACT_MAX_FILE_SIZE_MB: raw }),
        "INVALID_INPUT",
        "INVALID_SETTING",
      );
      expect(err.details).toEqual({ setting: "ARTIFACT_MAX_FILE_SIZE_MB" });
    }
  });

  it("names the content type an uploader sends", () => {
    expect(contentTypeForFilename(DEFAULT_UPLOAD_POLICY, "a.PNG")).toBe("image/png");
    expect(contentTypeForFilename(DEFAULT_UPLOAD_POLICY, "a.avi")).toBe("video/x-msvideo");
    expect(contentTypeForFilename(DEFAULT_UPLOAD_POLICY, "a.exe")).toBeUndefined();
    expect(contentTypeForFilename(DEFAULT_UPLOAD_POLICY, "../a.png")).toBeUndefined();
    expect(contentTypeForFilename(DEFAULT_UPLOAD_POLICY, "a.constructor")).toBeUndefined();
  });

  it.each([
    [" Text/Plain ; Charset=UTF-8 ", "text/plain; charset=utf-8"],
    ['text/plain; charset="utf-8"', "text/plain; charset=utf-8"],
    ["TEXT/PLAIN", "text/plain"],
  ])("normalizes the content type %j to %j", (contentType, normalized) => {
    expect(
      checkUpload(DEFAULT_UPLOAD_POLICY, { filename: "a.txt", contentType, fileSize: 1 }).contentType,
    ).toBe(normalized);
  });

  it.each([
    "text/plain; boundary=x",
    "text/plain; charset=utf-8; charset=latin1",
    'text/plain; charset="utf 8"',
    "text/plain; charset=",
    `text/plain; charset=${"x".repeat(41)}`,
    `text/${"x".repeat(300)}`,
  ])("refuses the parameters of %j", async (contentType) => {
    await expectStowageError(
      () => checkUpload(DEFAULT_UPLOAD_POLICY, { filename: "a.txt", contentType, fileSize: 1 }),
      "INVALID_INPUT",
      "CONTENT_TYPE_MISMATCH",
    );
  });
});
