import { randomBytes, randomUUID } from "node:crypto";
import { StowageError, type StowageErrorCode } from "@stowage/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_MAX_SESSION_BLOB_BYTES } from "../archive/session-archive.js";
import {
  type CreateSessionBlobInput,
  DEFAULT_SESSION_TTL_MS,
  type SessionBlobRecord,
  type SessionBlobRepository,
} from "../repository/session-blob-repository.js";
import { HOSTILE_IDS } from "./hostile-ids.js";

export interface SessionBlobRepositoryConformanceOptions {
  /** Suite title, e.g. `postgres session blobs (PGlite)`. */
  name: string;
  /** A fresh, empty repository for one test. */
  createRepository(): SessionBlobRepository | Promise<SessionBlobRepository>;
  /** Removes what a test left behind. */
  destroyRepository?(repository: SessionBlobRepository): Promise<void>;
  /** When set, the suite is skipped and this reason printed. */
  skip?: string;
}

async function codeOf(promise: Promise<unknown>): Promise<StowageErrorCode | "success" | string> {
  return promise.then(
    () => "success",
    (err: unknown) => (StowageError.is(err) ? err.code : `not a StowageError: ${String(err)}`),
  );
}

function sameBytes(actual: Uint8Array | undefined, expected: Uint8Array): void {
  expect(actual).toBeInstanceOf(Uint8Array);
  expect(
    Buffer.from(actual!.buffer, actual!.byteOffset, actual!.byteLength).equals(Buffer.from(expected)),
  ).toBe(true);
}

function input(overrides: Partial<CreateSessionBlobInput> = {}): CreateSessionBlobInput {
  const blob = new Uint8Array(randomBytes(1024 + Math.floor(Math.random() * 1024)));
  return {
    requestId: `req-${randomUUID()}`,
    sessionId: randomUUID(),
    agentType: "claude-code",
    codec: "brotli",
    blob,
    rawSizeBytes: blob.byteLength * 4,
    ...overrides,
  };
}

const SECOND = 1000;

/**
 * The behaviour every {@link SessionBlobRepository} must have. A backend's test file calls it
 * and adds only what is specific to that backend.
 */
export function describeSessionBlobRepositoryConformance(
  options: SessionBlobRepositoryConformanceOptions,
): void {
  const { name } = options;
  if (options.skip) {
    console.warn(`[stowage] ${name} conformance skipped: ${options.skip}`);
    describe.skip(`${name} conformance (skipped: ${options.skip})`, () => {
      it("needs its backend", () => {});
    });
    return;
  }

  describe(`${name} conformance`, () => {
    let repo: SessionBlobRepository;
    beforeEach(async () => {
      repo = await options.createRepository();
    });
    afterEach(async () => {
      await options.destroyRepository?.(repo);
    });

    it("stores a session and reads it back by request and by session id", async () => {
      const data = input({ codec: "gzip" });
      const before = Date.now();
      const created = await repo.create(data);
      expect(created).toMatchObject({
        requestId: data.requestId,
        sessionId: data.sessionId,
        agentType: "claude-code",
        codec: "gzip",
        blobSizeBytes: data.blob.byteLength,
        rawSizeBytes: data.rawSizeBytes,
      });
      expect(Number.isSafeInteger(created.id)).toBe(true);
      sameBytes(created.blob, data.blob);
      expect(created.createdAt.getTime()).toBeGreaterThanOrEqual(before - 5 * SECOND);
      for (const found of [
        await repo.getLatestForRequest(data.requestId),
        await repo.getBySessionId(data.sessionId),
      ]) {
        expect(found).not.toBeNull();
        const { blob, ...rest } = found as SessionBlobRecord;
        const { blob: _ignored, ...expected } = created;
        expect(rest).toEqual(expected);
        sameBytes(blob, data.blob);
      }
    });

    it("returns null for a request or session that has nothing stored", async () => {
      expect(await repo.getLatestForRequest("req-none")).toBeNull();
      expect(await repo.getBySessionId(randomUUID())).toBeNull();
      expect(await repo.deleteForRequest("req-none")).toBe(0);
    });

    it("keeps what was stored even if the caller reuses its buffer", async () => {
      const data = input();
      const original = data.blob.slice();
      await repo.create(data);
      data.blob.fill(0);
      sameBytes((await repo.getBySessionId(data.sessionId))?.blob, original);
    });

    it("upserts on (request id, session id): the second create replaces the first", async () => {
      const first = await repo.create(
        input({ requestId: "req-upsert", sessionId: "7f0e8c1a-0d5b-4a57-9a49-c2b5f6f1e001" }),
      );
      const replacement = input({
        requestId: "req-upsert",
        sessionId: "7f0e8c1a-0d5b-4a57-9a49-c2b5f6f1e001",
        codec: "gzip",
        agentType: "claude-code-2",
      });
      const second = await repo.create(replacement);
      expect(second.id).toBe(first.id);
      const found = await repo.getLatestForRequest("req-upsert");
      expect(found?.codec).toBe("gzip");
      expect(found?.agentType).toBe("claude-code-2");
      expect(found?.blobSizeBytes).toBe(replacement.blob.byteLength);
      sameBytes(found?.blob, replacement.blob);
      expect(await repo.deleteForRequest("req-upsert")).toBe(1);
    });

    it("getLatestForRequest returns the most recently stored session of the request", async () => {
      const a = input({ requestId: "req-latest" });
      const b = input({ requestId: "req-latest" });
      await repo.create(a);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await repo.create(b);
      await repo.create(input({ requestId: "req-other" }));
      expect((await repo.getLatestForRequest("req-latest"))?.sessionId).toBe(b.sessionId);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await repo.create({ ...a, blob: new Uint8Array([1, 2, 3]) });
      expect((await repo.getLatestForRequest("req-latest"))?.sessionId).toBe(a.sessionId);
    });

    it("expires after 7 days by default; an explicit expiresAt or null is kept", async () => {
      const defaulted = await repo.create(input());
      const expected = Date.now() + DEFAULT_SESSION_TTL_MS;
      expect(Math.abs(defaulted.expiresAt!.getTime() - expected)).toBeLessThan(60 * SECOND);
      const at = new Date(Date.now() + 3600 * SECOND);
      expect((await repo.create(input({ expiresAt: at }))).expiresAt?.getTime()).toBe(at.getTime());
      const forever = input({ expiresAt: null });
      expect((await repo.create(forever)).expiresAt).toBeNull();
      expect((await repo.getBySessionId(forever.sessionId))?.expiresAt).toBeNull();
    });

    it("never returns an expired session, and deleteExpired removes only expired ones", async () => {
      const past = new Date(Date.now() - 60 * SECOND);
      const expired = input({ requestId: "req-ttl", expiresAt: past });
      const live = input({ requestId: "req-ttl" });
      const forever = input({ requestId: "req-ttl-forever", expiresAt: null });
      await repo.create(live);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await repo.create(expired);
      await repo.create(forever);
      expect(await repo.getBySessionId(expired.sessionId)).toBeNull();
      expect((await repo.getLatestForRequest("req-ttl"))?.sessionId).toBe(live.sessionId);
      expect(await repo.deleteExpired()).toBe(1);
      expect(await repo.deleteExpired()).toBe(0);
      expect((await repo.getBySessionId(live.sessionId))?.sessionId).toBe(live.sessionId);
      expect((await repo.getBySessionId(forever.sessionId))?.sessionId).toBe(forever.sessionId);
      // The expired record is really gone: storing it again creates a fresh record.
      expect(await repo.deleteForRequest("req-ttl")).toBe(1);
    });

    it("deleteExpired works in bounded batches and can stop after maxBatches", async () => {
      const past = new Date(Date.now() - 60 * SECOND);
      for (let i = 0; i < 25; i++) await repo.create(input({ requestId: "req-batch", expiresAt: past }));
      expect(await repo.deleteExpired({ batchSize: 10, maxBatches: 1 })).toBe(10);
      expect(await repo.deleteExpired({ batchSize: 10 })).toBe(15);
      expect(await repo.deleteExpired({ batchSize: 10 })).toBe(0);
      for (const batchSize of [0, -1, 1.5, 100_001, Number.NaN]) {
        expect(await codeOf(repo.deleteExpired({ batchSize }))).toBe("INVALID_INPUT");
      }
      expect(await codeOf(repo.deleteExpired({ maxBatches: 0 }))).toBe("INVALID_INPUT");
    });

    it("deleteForRequest removes every session of that request and nothing else", async () => {
      for (let i = 0; i < 3; i++) await repo.create(input({ requestId: "req-delete" }));
      const other = input({ requestId: "req-keep" });
      await repo.create(other);
      expect(await repo.deleteForRequest("req-delete")).toBe(3);
      expect(await repo.getLatestForRequest("req-delete")).toBeNull();
      expect((await repo.getLatestForRequest("req-keep"))?.sessionId).toBe(other.sessionId);
    });

    it("concurrent creates of one (request, session) leave one record holding a writer's blob", async () => {
      const sessionId = randomUUID();
      const writers = Array.from({ length: 8 }, (_, i) =>
        input({
          requestId: "req-race",
          sessionId,
          blob: new Uint8Array(4096).fill(i + 1),
          rawSizeBytes: 9000,
        }),
      );
      const results = await Promise.all(writers.map((writer) => repo.create(writer)));
      expect(new Set(results.map((result) => result.id)).size).toBe(1);
      const stored = await repo.getBySessionId(sessionId);
      sameBytes(stored?.blob, writers[stored!.blob[0]! - 1]!.blob);
      expect(await repo.deleteForRequest("req-race")).toBe(1);
    });

    describe("rejects hostile and malformed input with a typed error, storing nothing", () => {
      for (const { value, why } of HOSTILE_IDS) {
        it(`id: ${why}`, async () => {
          const data = input({ requestId: "req-hostile" });
          expect(await codeOf(repo.create({ ...data, requestId: value as string }))).toBe("INVALID_INPUT");
          expect(await codeOf(repo.create({ ...data, sessionId: value as string }))).toBe("INVALID_INPUT");
          expect(await codeOf(repo.create({ ...data, agentType: value as string }))).toBe("INVALID_INPUT");
          expect(await codeOf(repo.getLatestForRequest(value as string))).toBe("INVALID_INPUT");
          expect(await codeOf(repo.getBySessionId(value as string))).toBe("INVALID_INPUT");
          expect(await codeOf(repo.deleteForRequest(value as string))).toBe("INVALID_INPUT");
          expect(await repo.getLatestForRequest("req-hostile")).toBeNull();
        });
      }
      it("a wrong codec tag, a bad blob, a bad size or expiry", async () => {
        const data = input({ requestId: "req-bad" });
        const cases: [Partial<Record<keyof CreateSessionBlobInput, unknown>>, string][] = [
          [{ codec: "lz4" }, "INVALID_INPUT"],
          [{ codec: "GZIP" }, "INVALID_INPUT"],
          [{ codec: undefined }, "INVALID_INPUT"],
          [{ blob: new Uint8Array(0) }, "INVALID_INPUT"],
          [{ blob: "aGVsbG8=" }, "INVALID_INPUT"],
          [{ blob: [1, 2, 3] }, "INVALID_INPUT"],
          [{ blob: new Uint8Array(DEFAULT_MAX_SESSION_BLOB_BYTES + 1) }, "TOO_LARGE"],
          [{ rawSizeBytes: 0 }, "INVALID_INPUT"],
          [{ rawSizeBytes: -5 }, "INVALID_INPUT"],
          [{ rawSizeBytes: 1.5 }, "INVALID_INPUT"],
          [{ rawSizeBytes: "12" }, "INVALID_INPUT"],
          [{ expiresAt: new Date("nope") }, "INVALID_INPUT"],
          [{ expiresAt: "2030-01-01" }, "INVALID_INPUT"],
        ];
        for (const [override, code] of cases) {
          expect(await codeOf(repo.create({ ...data, ...override } as CreateSessionBlobInput))).toBe(code);
        }
        expect(await codeOf(repo.create(null as unknown as CreateSessionBlobInput))).toBe("INVALID_INPUT");
        expect(await repo.getLatestForRequest("req-bad")).toBeNull();
      });
    });

    it("an already-aborted signal fails with ABORTED and stores nothing", async () => {
      const controller = new AbortController();
      controller.abort(new Error("stop"));
      const { signal } = controller;
      const data = input({ requestId: "req-abort" });
      expect(await codeOf(repo.create(data, { signal }))).toBe("ABORTED");
      expect(await codeOf(repo.getLatestForRequest("req-abort", { signal }))).toBe("ABORTED");
      expect(await codeOf(repo.deleteExpired({ signal }))).toBe("ABORTED");
      expect(await repo.getLatestForRequest("req-abort")).toBeNull();
    });
  });
}
