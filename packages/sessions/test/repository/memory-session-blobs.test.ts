import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createMemorySessionBlobRepository } from "../../src/repository/memory-session-blobs.js";
import { sampleSessionBlob } from "../../src/testing/sample-session-blob.js";
import { describeSessionBlobRepositoryConformance } from "../../src/testing/session-blob-repository-conformance.js";

describeSessionBlobRepositoryConformance({
  name: "memory session blobs",
  createRepository: () => createMemorySessionBlobRepository(),
});

describe("memory session blobs", () => {
  it("expires records by its clock and validates its options", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const repo = createMemorySessionBlobRepository({ now: () => now, ttlMs: 60_000 });
    const sessionId = "8091a2b3-c4d5-4e6f-8071-8293a4b5c6d7";
    const record = await repo.create({
      owner: "user:alice",
      requestId: "r1",
      ...sampleSessionBlob({ sessionId }),
    });
    expect(record.expiresAt?.toISOString()).toBe("2026-01-01T00:01:00.000Z");
    now = new Date("2026-01-01T00:01:00Z");
    expect(await repo.getBySessionId("user:alice", sessionId)).toBeNull();
    expect(await repo.deleteExpired()).toBe(1);
    expect(() => createMemorySessionBlobRepository({ ttlMs: 0 })).toThrow(/ttlMs/);
    expect(() => createMemorySessionBlobRepository({ maxBlobBytes: -1 })).toThrow(/maxBlobBytes/);
  });

  it("says the limit of a page and of a batch in details.limit (the README gives each)", async () => {
    const repo = createMemorySessionBlobRepository();
    const page = await expectStowageError(repo.list({ limit: 1001 }), "INVALID_INPUT");
    expect(page.details?.limit).toBe(1000);
    const owned = await expectStowageError(repo.listByOwner("user:alice", { limit: 1001 }), "INVALID_INPUT");
    expect(owned.details?.limit).toBe(1000);
    const batch = await expectStowageError(repo.deleteExpired({ batchSize: 100_001 }), "INVALID_INPUT");
    expect(batch.details?.limit).toBe(100_000);
  });
});
