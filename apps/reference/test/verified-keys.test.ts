import { expectStowageError } from "@stowage/core/testing";
import {
  type ApiKeyRecordStore,
  createApiKeys,
  createMemoryApiKeyRecordStore,
} from "@stowage/tenancy/shared";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { cacheVerifiedKeys } from "../src/http/verified-keys.js";

/** Key records that count their reads and can hold a deletion until told to go on. */
function countingRecords() {
  const inner = createMemoryApiKeyRecordStore();
  let release: (() => void) | undefined;
  const records: ApiKeyRecordStore & { reads: number; holdDeletes(): () => void } = {
    reads: 0,
    get(id, options) {
      records.reads++;
      return inner.get(id, options);
    },
    put: (record, options) => inner.put(record, options),
    async delete(id, options) {
      if (release) await new Promise<void>((resolve) => (release = resolve));
      return inner.delete(id, options);
    },
    holdDeletes() {
      release = () => {};
      return () => release?.();
    },
  };
  return records;
}

const alice = { kind: "user", id: "alice" } as const;

describe("cacheVerifiedKeys", () => {
  it("reads a key's record once while it is kept, and gives the same id and principal", async () => {
    const records = countingRecords();
    const keys = cacheVerifiedKeys(createApiKeys({ records }), 60_000);
    const { apiKey, record } = await keys.issue(alice);
    const first = await keys.verify(apiKey);
    const again = await keys.verify(apiKey);
    expect(first).toEqual({ keyId: record.id, principal: alice });
    expect(again).toEqual(first);
    expect(await keys.authenticate(apiKey)).toEqual(alice);
    expect(records.reads).toBe(1);
  });

  it("a principal handed out cannot change what the next request gets", async () => {
    const keys = cacheVerifiedKeys(createApiKeys({ records: countingRecords() }), 60_000);
    const { apiKey } = await keys.issue(alice);
    const handed = (await keys.verify(apiKey))!;
    (handed.principal as { id: string }).id = "mallory";
    expect((await keys.verify(apiKey))!.principal).toEqual(alice);
  });

  // Only keys that verified are kept: the rest are read every time (and rate limited by address).
  it.each([
    ["an unknown key", `stw_${"A".repeat(12)}_${"A".repeat(43)}`],
    ["a wrong secret for a real id", undefined],
  ])("%s is read each time and stays refused", async (_name, given) => {
    const records = countingRecords();
    const keys = cacheVerifiedKeys(createApiKeys({ records }), 60_000);
    const { apiKey } = await keys.issue(alice);
    const wrong = given ?? `${apiKey.slice(0, -4)}AAAA`;
    expect(await keys.verify(wrong)).toBeNull();
    expect(await keys.verify(wrong)).toBeNull();
    expect(records.reads).toBe(2);
  });

  it.each([null, undefined, "", "not-a-key", "x".repeat(10_000)])(
    "malformed input %j is refused without a read",
    async (given) => {
      const records = countingRecords();
      const keys = cacheVerifiedKeys(createApiKeys({ records }), 60_000);
      expect(await keys.verify(given as string)).toBeNull();
      expect(records.reads).toBe(0);
    },
  );

  it("a key revoked through it is refused at once", async () => {
    const keys = cacheVerifiedKeys(createApiKeys({ records: countingRecords() }), 60_000);
    const { apiKey, record } = await keys.issue(alice);
    expect(await keys.verify(apiKey)).not.toBeNull();
    await keys.revoke(record.id);
    expect(await keys.verify(apiKey)).toBeNull();
  });

  it("a verification that read the record while it was being revoked is not kept", async () => {
    const records = countingRecords();
    const keys = cacheVerifiedKeys(createApiKeys({ records }), 60_000);
    const { apiKey, record } = await keys.issue(alice);
    const goOn = records.holdDeletes();
    const revoking = keys.revoke(record.id);
    // The record is still there: this verification succeeds, but must not outlive the revocation.
    expect(await keys.verify(apiKey)).not.toBeNull();
    goOn();
    await revoking;
    expect(await keys.verify(apiKey)).toBeNull();
  });

  it("a key revoked elsewhere (another process, same records) is read again once its time is up", async () => {
    const records = countingRecords();
    const elsewhere = createApiKeys({ records });
    const keys = cacheVerifiedKeys(createApiKeys({ records }), 20);
    const { apiKey, record } = await elsewhere.issue(alice);
    expect(await keys.verify(apiKey)).not.toBeNull();
    await elsewhere.revoke(record.id);
    // A bounded wait past the 20 ms it is kept, not a timing assertion.
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await keys.verify(apiKey)).toBeNull();
  });

  it("0 keeps nothing: the keys as they were", () => {
    const keys = createApiKeys();
    expect(cacheVerifiedKeys(keys, 0)).toBe(keys);
  });
});

describe("STOWAGE_API_KEY_CACHE_SECONDS", () => {
  const configWith = (value?: string) =>
    loadConfig(
      {
        STOWAGE_DATA_DIR: "/tmp/stowage-config-unused",
        STOWAGE_SIGNING_SECRET: "s".repeat(64),
        ...(value === undefined ? {} : { STOWAGE_API_KEY_CACHE_SECONDS: value }),
      },
      "/tmp",
    );

  it.each<[string | undefined, number]>([
    [undefined, 5_000],
    ["0", 0],
    ["2.5", 2_500],
    ["300", 300_000],
    // core's env convention: trimmed, and blank means unset.
    [" 5 ", 5_000],
    ["", 5_000],
  ])("%j is %i ms", async (value, ms) => {
    expect((await configWith(value)).apiKeyCacheMs).toBe(ms);
  });

  it.each(["-1", "301", "abc", "1e3", "5s", "0x10", "Infinity", "NaN", "1.", ".5"])(
    "%j is INVALID_SETTING",
    async (value) => {
      await expectStowageError(configWith(value), "INVALID_INPUT");
      await expect(configWith(value)).rejects.toMatchObject({ reason: "INVALID_SETTING" });
    },
  );
});
