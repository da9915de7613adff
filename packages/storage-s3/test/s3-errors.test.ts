import { S3ServiceException } from "@aws-sdk/client-s3";
import { StowageError } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { fromS3Error, isS3NotFound, isS3PreconditionFailed } from "../src/s3-errors.js";

function s3Error(name: string, status: number): S3ServiceException {
  return new S3ServiceException({
    name,
    $fault: status >= 500 ? "server" : "client",
    $metadata: { httpStatusCode: status, requestId: "tx-1" },
    message: name === "Unknown" ? "UnknownError" : `${name} happened`,
  });
}

describe("S3 error mapping", () => {
  it.each([
    ["NoSuchKey", 404, "NOT_FOUND"],
    ["NotFound", 404, "NOT_FOUND"],
    ["NoSuchBucket", 404, "NOT_FOUND"],
    ["NoSuchUpload", 404, "NOT_FOUND"],
    ["PreconditionFailed", 412, "CONFLICT"],
    ["ConditionalRequestConflict", 409, "CONFLICT"],
    ["AccessDenied", 403, "FORBIDDEN"],
    ["SignatureDoesNotMatch", 403, "FORBIDDEN"],
    ["InvalidAccessKeyId", 403, "FORBIDDEN"],
    ["ExpiredToken", 400, "EXPIRED"],
    ["EntityTooLarge", 400, "TOO_LARGE"],
    ["InvalidArgument", 400, "INVALID_INPUT"],
    ["BadDigest", 400, "INTEGRITY"],
    ["QuotaExceeded", 403, "STORAGE_FULL"],
    ["SlowDown", 503, "UNAVAILABLE"],
    ["InternalError", 500, "UNAVAILABLE"],
    ["Unknown", 404, "NOT_FOUND"],
    ["Unknown", 401, "UNAUTHORIZED"],
    ["Unknown", 403, "FORBIDDEN"],
    ["Unknown", 413, "TOO_LARGE"],
    ["Unknown", 429, "UNAVAILABLE"],
    ["Unknown", 502, "UNAVAILABLE"],
    ["Unknown", 418, "INVALID_INPUT"],
  ])("%s (HTTP %d) → %s", (name, status, code) => {
    const mapped = fromS3Error(s3Error(name, status), 's3 get "k"');
    expect(mapped.code).toBe(code);
    expect(mapped.reason).toBe(name);
    expect(mapped.details).toEqual({ status, requestId: "tx-1" });
    expect(mapped.message).toContain(`s3 get "k": S3 ${name} (HTTP ${status})`);
    expect(mapped.message).not.toContain("UnknownError");
    expect(mapped.cause).toBeInstanceOf(S3ServiceException);
  });

  it("maps network failures by errno and passes StowageErrors through", () => {
    // The SDK adds $metadata without a status to network errors.
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {
      code: "ECONNREFUSED",
      $metadata: { attempts: 3 },
    });
    expect(fromS3Error(refused, "s3 put").code).toBe("UNAVAILABLE");
    const timeout = Object.assign(new Error("timed out"), { name: "TimeoutError" });
    expect(fromS3Error(timeout, "s3 put").code).toBe("UNAVAILABLE");
    const aborted = Object.assign(new Error("aborted"), { name: "AbortError" });
    expect(fromS3Error(aborted, "s3 put").code).toBe("ABORTED");
    const own = new StowageError("ALREADY_EXISTS", "x");
    expect(fromS3Error(own, "s3 put")).toBe(own);
    expect(fromS3Error("weird", "s3 put").code).toBe("INTERNAL");
  });

  it("recognizes missing keys and failed preconditions", () => {
    expect(isS3NotFound(s3Error("NoSuchKey", 404))).toBe(true);
    expect(isS3NotFound(s3Error("Unknown", 404))).toBe(true);
    expect(isS3NotFound(s3Error("AccessDenied", 403))).toBe(false);
    expect(isS3NotFound(new Error("NoSuchKey"))).toBe(false);
    expect(isS3PreconditionFailed(s3Error("PreconditionFailed", 412))).toBe(true);
    expect(isS3PreconditionFailed(s3Error("Unknown", 412))).toBe(true);
    expect(isS3PreconditionFailed(s3Error("Unknown", 409))).toBe(false);
  });
});
