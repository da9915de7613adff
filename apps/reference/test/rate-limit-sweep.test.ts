import { rateLimits } from "@stowage/storage-postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRateLimits } from "../src/http/rate-limit.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

// The buckets of callers who stopped calling are deleted an hour after they expired, every five
// minutes, and the sweep stops when the limits are closed: rate-limiter-flexible's own sweep could
// not be stopped, and went on querying the database of an app closed in a process that lived on
// (every app test printed "Failed to clear expired records ... PGlite is closed").

const MINUTE = 60_000;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const db = () => app.server.services.database.db;

async function bucketKeys(): Promise<string[]> {
  const rows = await db().select({ key: rateLimits.key }).from(rateLimits);
  return rows.map((row) => row.key).sort();
}

/** Polls (boundedly) until the buckets are `expected`: the sweep's delete runs after its timer. */
async function expectBuckets(expected: string[]): Promise<void> {
  for (let i = 0; i < 100 && JSON.stringify(await bucketKeys()) !== JSON.stringify(expected); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(await bucketKeys()).toEqual(expected);
}

describe("the rate limits' sweep of expired buckets", () => {
  it("deletes buckets an hour past their expiry every five minutes, keeps the rest, and stops when closed", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const now = Date.now();
      await db()
        .insert(rateLimits)
        .values([
          { key: "sweep:gone", points: 3, expire: new Date(now - 2 * 60 * MINUTE) },
          { key: "sweep:recent", points: 3, expire: new Date(now - 10 * MINUTE) },
          { key: "sweep:live", points: 1, expire: new Date(now + MINUTE) },
          { key: "sweep:forever", points: 1, expire: null },
        ]);
      const limits = createRateLimits({ perMinute: 10, db: db() });
      vi.advanceTimersByTime(4 * MINUTE);
      await expectBuckets(["sweep:forever", "sweep:gone", "sweep:live", "sweep:recent"]);
      vi.advanceTimersByTime(MINUTE);
      await expectBuckets(["sweep:forever", "sweep:live", "sweep:recent"]);

      limits.close();
      await db()
        .insert(rateLimits)
        .values({ key: "sweep:after-close", points: 1, expire: new Date(now - 2 * 60 * MINUTE) });
      vi.advanceTimersByTime(60 * MINUTE);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await bucketKeys()).toEqual([
        "sweep:after-close",
        "sweep:forever",
        "sweep:live",
        "sweep:recent",
      ]);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
