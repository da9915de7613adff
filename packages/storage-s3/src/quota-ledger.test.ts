import { createMemoryObjectStore, type ObjectStore, StowageError } from "@stowage/core";
import { beforeEach, describe, expect, it } from "vitest";
import {
  createMemoryQuotaLedger,
  DEFAULT_RESERVATION_GRACE_MS,
  type QuotaLedger,
  type QuotaReservationRequest,
  type QuotaUsageSource,
  usageSourceFromStore,
} from "./quota-ledger.js";

const SCOPE = "sessions/user/u1/s1/";
const key = (name: string) => `${SCOPE}artifacts/${name}`;
const bytes = (size: number) => new Uint8Array(size);

/** The store's own source, with every call counted. */
function countingSource(store: ObjectStore): QuotaUsageSource & { lists: number; heads: number } {
  const inner = usageSourceFromStore(store);
  const source = {
    lists: 0,
    heads: 0,
    list(prefix: string, options: { signal?: AbortSignal }) {
      source.lists++;
      return inner.list(prefix, options);
    },
    head(k: string, options: { signal?: AbortSignal }) {
      source.heads++;
      return inner.head(k, options);
    },
  };
  return source;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "success",
    (err: unknown) => (StowageError.is(err) ? err.code : String(err)),
  );
}

describe("memory quota ledger", () => {
  let store: ObjectStore;
  let source: ReturnType<typeof countingSource>;
  let clock: number;
  let ledger: QuotaLedger;
  const urlExpiresAt = () => new Date(clock + 900_000);
  const request = (name: string, size: number, limitBytes = 100): QuotaReservationRequest => ({
    scope: SCOPE,
    key: key(name),
    bytes: size,
    limitBytes,
    urlExpiresAt: urlExpiresAt(),
    source,
  });

  beforeEach(() => {
    store = createMemoryObjectStore();
    source = countingSource(store);
    clock = 1_000_000_000_000;
    ledger = createMemoryQuotaLedger({ now: () => clock });
  });

  it("counts every object under the session prefix, paginating past 1,000 keys, and nothing else", async () => {
    for (let i = 0; i < 1500; i++) await store.put(key(`f-${i}.log`), bytes(10));
    await store.put(`${SCOPE}session.json`, bytes(7));
    await store.put("sessions/user/u1/s10/artifacts/other.log", bytes(1000));
    await store.put("sessions/user/u10/s1/artifacts/other.log", bytes(1000));
    const usage = await ledger.usage(SCOPE, source);
    expect(usage).toEqual({
      usedBytes: 15_007,
      pendingBytes: 0,
      totalBytes: 15_007,
      objects: 1501,
      pendingUploads: 0,
    });
  });

  it("grants up to the limit and refuses beyond it, with the numbers", async () => {
    await store.put(key("old.log"), bytes(60));
    expect((await ledger.reserve(request("a.log", 30))).usage.totalBytes).toBe(90);
    expect((await ledger.reserve(request("b.log", 10))).usage.totalBytes).toBe(100);
    const refused = await ledger.reserve(request("c.log", 1)).catch((err: unknown) => err);
    expect(StowageError.is(refused, "QUOTA_EXCEEDED")).toBe(true);
    expect((refused as StowageError).details).toEqual({
      limitBytes: 100,
      usedBytes: 60,
      pendingBytes: 40,
      requestedBytes: 1,
    });
    expect((refused as StowageError).message).toContain("limit of 100 B would be exceeded");
  });

  it("replaces an object's old size on overwrite instead of adding to it", async () => {
    await store.put(key("shot.png"), bytes(60));
    // 60 → 90 grows the total by 30, not by 90.
    expect((await ledger.reserve(request("shot.png", 90))).usage.totalBytes).toBe(90);
    // Shrinking counts the larger size until the upload is seen: the old object is still there.
    expect((await ledger.reserve(request("shot.png", 10))).usage.totalBytes).toBe(90);
    expect(await codeOf(ledger.reserve(request("new.png", 11)))).toBe("QUOTA_EXCEEDED");
    expect(await codeOf(ledger.reserve(request("new.png", 10)))).toBe("success");
  });

  it("20 concurrent requests near the limit: exactly the ones that fit are granted", async () => {
    await store.put(key("base.bin"), bytes(500));
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => ledger.reserve(request(`f-${i}.png`, 60, 1000))),
    );
    const granted = results.filter((result) => result.status === "fulfilled");
    const refused = results.filter((result) => result.status === "rejected");
    expect(granted).toHaveLength(8);
    for (const result of refused) expect(StowageError.is(result.reason, "QUOTA_EXCEEDED")).toBe(true);
    const usage = await ledger.usage(SCOPE, source);
    expect(usage.totalBytes).toBe(980);
    expect(usage.pendingUploads).toBe(8);
    expect(source.lists).toBe(1);
  });

  it("concurrent requests for one key count once: only one object can end up there", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => ledger.reserve(request("same.mp4", 80))),
    );
    expect(results.every((result) => result.status === "fulfilled")).toBe(true);
    expect((await ledger.usage(SCOPE, source)).totalBytes).toBe(80);
  });

  it("holds a reservation until its URL expires (plus the grace), then settles it with one HEAD", async () => {
    await ledger.reserve(request("never-uploaded.png", 90));
    expect(await codeOf(ledger.reserve(request("b.png", 20)))).toBe("QUOTA_EXCEEDED");
    clock += 900_000 + DEFAULT_RESERVATION_GRACE_MS - 1;
    expect(await codeOf(ledger.reserve(request("b.png", 20)))).toBe("QUOTA_EXCEEDED");
    clock += 2;
    const heads = source.heads;
    expect(await codeOf(ledger.reserve(request("b.png", 20)))).toBe("success");
    expect(source.heads - heads).toBe(1);
    expect((await ledger.usage(SCOPE, source)).totalBytes).toBe(20);
  });

  it("an expired reservation whose upload landed becomes a counted object", async () => {
    await ledger.reserve(request("landed.png", 40));
    await store.put(key("landed.png"), bytes(40));
    clock += 900_000 + DEFAULT_RESERVATION_GRACE_MS + 1;
    expect(await ledger.usage(SCOPE, source)).toMatchObject({ usedBytes: 40, pendingBytes: 0, objects: 1 });
  });

  it("near the limit, sees uploads that already landed and frees what they no longer hold", async () => {
    await store.put(key("video.mp4"), bytes(80));
    await ledger.reserve(request("video.mp4", 20));
    // The agent re-uploads a smaller video: the old 80 bytes are gone.
    await store.put(key("video.mp4"), bytes(20));
    clock += 5000;
    expect((await ledger.reserve(request("new.png", 50))).usage.totalBytes).toBe(70);
  });

  it("per-request cost does not grow with the object count: one listing, no HEADs", async () => {
    await Promise.all(Array.from({ length: 5000 }, (_, i) => store.put(key(`f-${i}.log`), bytes(1))));
    for (let i = 0; i < 50; i++) await ledger.reserve(request(`new-${i % 5}.png`, 1, 1_000_000));
    expect(source.lists).toBe(1);
    expect(source.heads).toBe(0);
  });

  it("lists again after usageTtlMs, or at once after invalidate", async () => {
    ledger = createMemoryQuotaLedger({ now: () => clock, usageTtlMs: 60_000 });
    await store.put(key("a.log"), bytes(30));
    expect((await ledger.usage(SCOPE, source)).usedBytes).toBe(30);
    await store.put(key("b.log"), bytes(30));
    expect((await ledger.usage(SCOPE, source)).usedBytes).toBe(30);
    clock += 60_000;
    expect((await ledger.usage(SCOPE, source)).usedBytes).toBe(60);
    await store.delete(key("a.log"));
    ledger.invalidate(SCOPE);
    expect((await ledger.usage(SCOPE, source)).usedBytes).toBe(30);
    expect(source.lists).toBe(3);
  });

  it("release gives back a reservation that could not be used", async () => {
    const reservation = await ledger.reserve(request("a.png", 100));
    expect(await codeOf(ledger.reserve(request("b.png", 1)))).toBe("QUOTA_EXCEEDED");
    reservation.release();
    expect(await codeOf(ledger.reserve(request("b.png", 100)))).toBe("success");
  });

  it("keeps sessions apart and drops idle ones first", async () => {
    ledger = createMemoryQuotaLedger({ now: () => clock, maxScopes: 2 });
    const other = (scope: string): QuotaReservationRequest => ({
      ...request("x.png", 100),
      scope,
      key: `${scope}artifacts/x.png`,
    });
    await ledger.reserve(other("sessions/user/u1/a/"));
    await ledger.usage("sessions/user/u1/b/", source);
    await ledger.usage("sessions/user/u1/c/", source);
    await ledger.usage("sessions/user/u1/d/", source);
    // Session a holds a reservation, so it was never dropped: it still refuses more.
    expect(await codeOf(ledger.reserve(other("sessions/user/u1/a/")))).toBe("success");
    expect(
      await codeOf(
        ledger.reserve({ ...other("sessions/user/u1/a/"), key: "sessions/user/u1/a/artifacts/y.png" }),
      ),
    ).toBe("QUOTA_EXCEEDED");
  });

  it("rejects malformed requests and options", async () => {
    for (const bad of [
      { key: "sessions/user/u2/s1/artifacts/x.png" },
      { key: SCOPE },
      { bytes: -1 },
      { bytes: 1.5 },
      { limitBytes: Number.NaN },
      { urlExpiresAt: "soon" },
    ]) {
      expect(
        await codeOf(ledger.reserve({ ...request("x.png", 1), ...bad } as QuotaReservationRequest)),
      ).toBe("INVALID_INPUT");
    }
    for (const options of [{ usageTtlMs: -1 }, { reservationGraceMs: Number.NaN }, { maxScopes: 0 }]) {
      expect(() => createMemoryQuotaLedger(options)).toThrow(StowageError);
    }
  });

  it("a failing listing fails the request and leaves the ledger usable", async () => {
    let fail = true;
    const flaky: QuotaUsageSource = {
      list(prefix, options) {
        if (fail) throw new StowageError("UNAVAILABLE", "listing failed");
        return source.list(prefix, options);
      },
      head: (k, options) => source.head(k, options),
    };
    expect(await codeOf(ledger.reserve({ ...request("a.png", 10), source: flaky }))).toBe("UNAVAILABLE");
    fail = false;
    expect(await codeOf(ledger.reserve({ ...request("a.png", 10), source: flaky }))).toBe("success");
  });

  it("an aborted signal stops a reservation", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await codeOf(ledger.reserve(request("a.png", 1), { signal: controller.signal }))).toBe("ABORTED");
  });
});
