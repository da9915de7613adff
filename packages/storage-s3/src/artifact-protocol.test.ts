import { StowageError } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { artifactDownloadPath, artifactListPath, errorResponse } from "./artifact-protocol.js";
import { MAX_RETRY_DELAY_MS, retryDelayMs, sleep } from "./retry.js";

describe("artifact HTTP protocol", () => {
  it("maps errors to statuses without leaking internals", () => {
    const quota = new StowageError("QUOTA_EXCEEDED", "limit", { reason: "SESSION_QUOTA_EXCEEDED" });
    expect(errorResponse(quota)).toEqual({
      status: 400,
      body: { error: "limit", code: "QUOTA_EXCEEDED", reason: "SESSION_QUOTA_EXCEEDED" },
    });
    expect(errorResponse(new StowageError("UNAUTHORIZED", "no key")).status).toBe(401);
    expect(errorResponse(new StowageError("FORBIDDEN", "not yours")).status).toBe(403);
    expect(errorResponse(new StowageError("TOO_LARGE", "big")).status).toBe(400);
    expect(errorResponse(new Error("password=hunter2 at db.ts:12"))).toEqual({
      status: 500,
      body: { error: "internal error", code: "INTERNAL" },
    });
  });

  it("encodes path parameters", () => {
    expect(artifactListPath("s1")).toBe("/agents/s1/artifacts");
    expect(artifactDownloadPath("s1", "a b/../c.png")).toBe(
      "/agents/s1/artifacts/a%20b%2F..%2Fc.png/download",
    );
  });
});

describe("retry delays", () => {
  it("back off exponentially with jitter, capped, and honour Retry-After", () => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const ceiling = Math.min(100 * 2 ** attempt, MAX_RETRY_DELAY_MS);
      const delay = retryDelayMs(attempt, 100);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
    expect(retryDelayMs(0, 100, "2")).toBe(2000);
    expect(retryDelayMs(0, 100, "3600")).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(0, 100, "Wed, 21 Oct 2015 07:28:00 GMT")).toBeLessThanOrEqual(100);
  });

  it("a wait ends early with ABORTED", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 10);
    await expect(sleep(10_000, controller.signal)).rejects.toMatchObject({ code: "ABORTED" });
  });
});
