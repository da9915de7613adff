import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import {
  type ApiKeyRecord,
  type ApiKeyRecordStore,
  createApiKeys,
  createMemoryApiKeyRecordStore,
  hashApiKey,
} from "../../src/shared/api-keys.js";

/** A record store that shows what was written, to prove the key itself never is. */
function recordingStore(): ApiKeyRecordStore & { written: ApiKeyRecord[] } {
  const inner = createMemoryApiKeyRecordStore();
  const written: ApiKeyRecord[] = [];
  return {
    written,
    get: (id) => inner.get(id),
    async put(record) {
      written.push(structuredClone(record));
      await inner.put(record);
    },
    delete: (id) => inner.delete(id),
  };
}

describe("API keys", () => {
  it("issues a key that authenticates to its principal and stores only its hash", async () => {
    const records = recordingStore();
    const keys = createApiKeys({ records });
    const { apiKey, record } = await keys.issue({ kind: "org", id: "acme" }, { label: "ci" });
    expect(apiKey).toMatch(/^stw_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/);
    expect(record.hash).toBe(hashApiKey(apiKey));
    expect(await keys.authenticate(apiKey)).toEqual({ kind: "org", id: "acme" });
    const stored = JSON.stringify(records.written);
    expect(stored).not.toContain(apiKey);
    expect(stored).not.toContain(apiKey.slice(-43));
    expect(records.written).toEqual([
      {
        id: record.id,
        hash: record.hash,
        principal: { kind: "org", id: "acme" },
        createdAt: expect.any(Date),
        label: "ci",
      },
    ]);
  });

  it("refuses wrong, malformed, unknown and revoked keys", async () => {
    const keys = createApiKeys();
    const { apiKey, record } = await keys.issue({ kind: "user", id: "u1" });
    const other = await keys.issue({ kind: "user", id: "u2" });
    const lastChar = apiKey.at(-1) === "A" ? "B" : "A";
    const candidates = [
      `${apiKey.slice(0, -1)}${lastChar}`, // one character of the secret changed
      `stw_${record.id}_${other.apiKey.slice(-43)}`, // another key's secret on this id
      `stw_AAAAAAAAAAAA_${apiKey.slice(-43)}`, // an unknown id
      apiKey.toUpperCase(),
      `${apiKey}x`,
      apiKey.slice(0, -1),
      `xyz_${apiKey.slice(4)}`,
      "",
      "stw__",
      "x".repeat(10_000),
      42 as unknown as string,
      null,
      undefined,
    ];
    for (const candidate of candidates) {
      expect(await keys.authenticate(candidate)).toBeNull();
      expect(await keys.verify(candidate)).toBeNull();
    }
    await keys.revoke(record.id);
    expect(await keys.authenticate(apiKey)).toBeNull();
    expect(await keys.verify(apiKey)).toBeNull();
    expect(await keys.authenticate(other.apiKey)).toEqual({ kind: "user", id: "u2" });
  });

  it("verify names the key by its public id, never by secret material", async () => {
    const keys = createApiKeys();
    const { apiKey, record } = await keys.issue({ kind: "org", id: "acme" });
    const verified = await keys.verify(apiKey);
    expect(verified).toEqual({ keyId: record.id, principal: { kind: "org", id: "acme" } });
    // The id is the 12 characters after `stw_`: the public half of `stw_<id>_<secret>`.
    expect(apiKey.slice(4, 16)).toBe(verified!.keyId);
  });

  it("refuses a key whose stored hash was tampered with", async () => {
    const records = createMemoryApiKeyRecordStore();
    const keys = createApiKeys({ records });
    const { apiKey, record } = await keys.issue({ kind: "user", id: "u1" });
    await records.put({ ...record, hash: "0".repeat(64) });
    expect(await keys.authenticate(apiKey)).toBeNull();
    await records.put({ ...record, hash: "not-hex" });
    expect(await keys.authenticate(apiKey)).toBeNull();
  });

  it("gives each key a distinct id and secret", async () => {
    const keys = createApiKeys();
    const issued = await Promise.all(Array.from({ length: 50 }, () => keys.issue({ kind: "user", id: "u" })));
    expect(new Set(issued.map((key) => key.apiKey)).size).toBe(50);
    expect(new Set(issued.map((key) => key.record.id)).size).toBe(50);
  });

  it("validates what it issues", async () => {
    const keys = createApiKeys({ prefix: "acme" });
    expect((await keys.issue({ kind: "user", id: "u" })).apiKey.startsWith("acme_")).toBe(true);
    await expectStowageError(keys.issue({ kind: "root", id: "u" } as never), "INVALID_INPUT");
    await expectStowageError(keys.issue({ kind: "user", id: "../u" }), "INVALID_INPUT");
    await expectStowageError(
      keys.issue({ kind: "user", id: "u" }, { label: "x".repeat(201) }),
      "INVALID_INPUT",
    );
    for (const prefix of ["", "a_b", "1abc", "x".repeat(17)]) {
      await expectStowageError(() => createApiKeys({ prefix }), "INVALID_INPUT");
    }
  });
});
