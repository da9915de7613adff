import { describe, expect, it } from "vitest";
import { describeSessionBlobRepositoryConformance } from "../testing/session-blob-repository-conformance.js";
import { createMemorySessionBlobRepository } from "./memory-session-blobs.js";

describeSessionBlobRepositoryConformance({
  name: "memory session blobs",
  createRepository: () => createMemorySessionBlobRepository(),
});

describe("memory session blobs", () => {
  it("expires records by its clock and validates its options", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const repo = createMemorySessionBlobRepository({ now: () => now, ttlMs: 60_000 });
    const blob = new Uint8Array([1, 2, 3]);
    const sessionId = "8091a2b3-c4d5-4e6f-8071-8293a4b5c6d7";
    const record = await repo.create({
      requestId: "r1",
      sessionId,
      agentType: "claude-code",
      codec: "gzip",
      blob,
      rawSizeBytes: 10,
    });
    expect(record.expiresAt?.toISOString()).toBe("2026-01-01T00:01:00.000Z");
    now = new Date("2026-01-01T00:01:00Z");
    expect(await repo.getBySessionId(sessionId)).toBeNull();
    expect(await repo.deleteExpired()).toBe(1);
    expect(() => createMemorySessionBlobRepository({ ttlMs: 0 })).toThrow(/ttlMs/);
    expect(() => createMemorySessionBlobRepository({ maxBlobBytes: -1 })).toThrow(/maxBlobBytes/);
  });
});
