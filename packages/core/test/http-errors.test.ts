import { describe, expect, it } from "vitest";
import { StowageError } from "../src/errors.js";
import { errorBody, errorFromBody, errorFromResponse, errorResponse } from "../src/http-errors.js";

/** What errorFromResponse reads of a body at most (the README's 64 KiB). */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

describe("the error wire format", () => {
  it("answers a StowageError with its code's status and the flat body documented clients read", async () => {
    const response = errorResponse(
      new StowageError("TOO_LARGE", "file is too large", { reason: "FILE_TOO_LARGE", details: { limit: 5 } }),
    );
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      error: "file is too large",
      code: "TOO_LARGE",
      reason: "FILE_TOO_LARGE",
      details: { limit: 5 },
    });
  });

  it("tells a rate-limited client when to come back", async () => {
    const response = errorResponse(
      new StowageError("RATE_LIMITED", "slow down", { details: { retryAfterSeconds: 2.2 } }),
    );
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("3");
  });

  it("answers anything else as a bare INTERNAL without its message", async () => {
    const response = errorResponse(new Error("password=hunter2 at /srv/secret"));
    expect(response.status).toBe(500);
    expect(await response.text()).toBe('{"error":"internal error","code":"INTERNAL"}');
    expect(errorBody("a string")).toEqual({ error: "internal error", code: "INTERNAL" });
  });

  it("reads the wire format back into the same StowageError", async () => {
    const original = new StowageError("QUOTA_EXCEEDED", "session is full", {
      reason: "SESSION_QUOTA_EXCEEDED",
      details: { limitBytes: 10 },
    });
    const err = await errorFromResponse(errorResponse(original), "POST /agents/artifacts/upload-url");
    expect(err.code).toBe("QUOTA_EXCEEDED");
    expect(err.reason).toBe("SESSION_QUOTA_EXCEEDED");
    expect(err.details).toEqual({ limitBytes: 10 });
    expect(err.message).toBe("POST /agents/artifacts/upload-url: session is full");
  });

  it("reads a parsed wire body (what an MCP error carries) into a StowageError", () => {
    const err = errorFromBody(
      { error: "blob is missing", code: "NOT_FOUND", reason: "BLOB_MISSING", details: { hash: "ab" } },
      "GET blob",
    );
    expect(StowageError.is(err, "NOT_FOUND")).toBe(true);
    expect(err?.reason).toBe("BLOB_MISSING");
    expect(err?.details).toEqual({ hash: "ab" });
    expect(err?.message).toBe("GET blob: blob is missing");
    expect(errorFromBody({ error: "x", code: "INTERNAL", reason: 5, details: "no" })?.toJSON()).toEqual({
      error: "x",
      code: "INTERNAL",
    });
  });

  it.each([
    [undefined, "nothing"],
    ["NOT_FOUND", "a string"],
    [{ code: "NOT_FOUND" }, "no message"],
    [{ error: "x", code: "NOT_A_CODE" }, "an unknown code"],
    [{ error: { message: "nested" }, code: "FORBIDDEN" }, "a nested message"],
  ] as [unknown, string][])("finds no error in %j (%s)", (value) => {
    expect(errorFromBody(value)).toBeUndefined();
  });

  it.each([
    [404, "<html>not found</html>", "NOT_FOUND"],
    [401, "", "UNAUTHORIZED"],
    [403, '{"error":{"code":"FORBIDDEN","message":"nested"}}', "FORBIDDEN"],
    [413, '{"error":"x","code":"NOT_A_CODE"}', "TOO_LARGE"],
    [429, "", "RATE_LIMITED"],
    [502, "bad gateway", "UNAVAILABLE"],
    [422, "[]", "INVALID_INPUT"],
  ])("gives a code from the status %i when the body is not the wire format", async (status, body, code) => {
    const err = await errorFromResponse(new Response(body, { status }));
    expect(err.code).toBe(code);
    expect(err.details).toEqual({ status });
  });

  it("reads at most 64 KiB of a hostile body", async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    const err = await errorFromResponse(new Response(endless, { status: 500 }));
    expect(err.code).toBe("UNAVAILABLE");
    expect(pulled).toBeLessThanOrEqual(MAX_ERROR_BODY_BYTES + 2 * 64 * 1024);
  });
});
