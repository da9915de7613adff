import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { MAX_RETRY_DELAY_MS, retryDelayMs, sleep, withRetries } from "../../src/agent/retry.js";

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
    await expectStowageError(sleep(10_000, controller.signal), "ABORTED");
  });
});

describe("withRetries", () => {
  const policy = (retries: number) => ({
    retries,
    baseDelayMs: 1,
    signal: undefined,
    transient: (err: unknown) => (err === "transient" ? { retryAfter: null } : undefined),
  });

  it("retries transient failures up to the limit, counting every request and every retry", async () => {
    const counter = { requests: 0, retries: 0 };
    let calls = 0;
    const result = await withRetries(policy(3), counter, async () => {
      if (++calls < 3) throw "transient";
      return "done";
    });
    expect(result).toBe("done");
    expect(counter).toEqual({ requests: 3, retries: 2 });
    await expect(withRetries(policy(2), counter, () => Promise.reject("transient"))).rejects.toBe(
      "transient",
    );
    expect(counter).toEqual({ requests: 6, retries: 4 });
  });

  it("gives up at once on anything else", async () => {
    const counter = { requests: 0, retries: 0 };
    await expect(withRetries(policy(5), counter, () => Promise.reject("refused"))).rejects.toBe("refused");
    expect(counter).toEqual({ requests: 1, retries: 0 });
  });
});
