// `artifacts` in paths and keys below is the design document's wire name (the API paths and the
// S3 layout `sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`).
import { describe, expect, it } from "vitest";
import {
  UPLOAD_COMPLETE_PATH,
  UPLOAD_URL_PATH,
  uploadDownloadPath,
  uploadListPath,
} from "../src/protocol.js";

describe("upload API paths", () => {
  it("are the design document's", () => {
    expect(UPLOAD_URL_PATH).toBe("/agents/artifacts/upload-url");
    expect(uploadListPath("s1")).toBe("/agents/s1/artifacts");
    expect(uploadDownloadPath("s1", "shot.png")).toBe("/agents/s1/artifacts/shot.png/download");
  });

  it("adds completion beside the upload-URL route", () => {
    expect(UPLOAD_COMPLETE_PATH).toBe("/agents/artifacts/complete");
  });

  it("encode path parameters", () => {
    expect(uploadListPath("a b")).toBe("/agents/a%20b/artifacts");
    expect(uploadDownloadPath("s1", "a b/../c.png")).toBe("/agents/s1/artifacts/a%20b%2F..%2Fc.png/download");
  });
});
