import { randomBytes, randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, type StowageErrorCode } from "@stowage/core";
import { expectStowageError, loadVitest } from "@stowage/core/testing";
import { readSessionFiles } from "../archive/read-session-files.js";
import { DEFAULT_MAX_SESSION_BLOB_BYTES } from "../archive/session-archive.js";
import { chunkSessionBlob } from "../chunks/chunk-session-blob.js";
import { iterateSessionBlobs } from "../repository/iterate-session-blobs.js";
import {
  type CreateSessionBlobInput,
  DEFAULT_SESSION_TTL_MS,
  type ExpiredSessionBlob,
  MAX_SESSION_BLOB_PAGE_SIZE,
  type SessionBlobRecord,
  type SessionBlobRepository,
} from "../repository/session-blob-repository.js";
import { HOSTILE_IDS } from "./hostile-ids.js";
import { sampleSessionBlob } from "./sample-session-blob.js";

const { afterEach, beforeEach, describe, expect, it } = await loadVitest("@stowage/sessions/testing");

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

function sameBytes(actual: Uint8Array | undefined, expected: Uint8Array): void {
  expect(actual).toBeInstanceOf(Uint8Array);
  expect(
    Buffer.from(actual!.buffer, actual!.byteOffset, actual!.byteLength).equals(Buffer.from(expected)),
  ).toBe(true);
}

/** The owner most tests store under; {@link OTHER} is the tenant that must never see its records. */
const OWNER = "user:alice";
const OTHER = "org:acme";

/** A valid record to create; a blob given in `overrides` must fit its session and agent. */
function input(overrides: Partial<CreateSessionBlobInput> = {}): CreateSessionBlobInput {
  const sessionId = overrides.sessionId ?? randomUUID();
  return {
    owner: OWNER,
    requestId: `req-${randomUUID()}`,
    ...sampleSessionBlob({ sessionId, note: randomBytes(8).toString("hex") }),
    ...overrides,
  };
}

/** Another valid blob of `record`'s session: what a later capture of it would store. */
function recaptured<T extends CreateSessionBlobInput>(record: T, note: string): T {
  return { ...record, ...sampleSessionBlob({ sessionId: record.sessionId, note }) };
}

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const ago = (ms: number) => new Date(Date.now() - ms);
/** A fresh owner for a test of the trash: what it lists is that test's alone. */
const ownerOf = () => `user:grace-${randomUUID()}`;

/**
 * The repository of the test running: a fresh one before each test of the enclosing describe
 * (`createRepository`), destroyed after it (`destroyRepository`). Every method goes to that one.
 */
function repositoryPerTest(options: SessionBlobRepositoryConformanceOptions): SessionBlobRepository {
  let current: SessionBlobRepository | undefined;
  beforeEach(async () => {
    current = await options.createRepository();
  });
  afterEach(async () => {
    await options.destroyRepository?.(current!);
  });
  const now = (): SessionBlobRepository => {
    if (!current) throw new Error("the conformance suite's repository exists only while a test runs");
    return current;
  };
  return {
    create: (input, operation) => now().create(input, operation),
    getLatestForRequest: (owner, requestId, operation) =>
      now().getLatestForRequest(owner, requestId, operation),
    getBySessionId: (owner, sessionId, operation) => now().getBySessionId(owner, sessionId, operation),
    deleteExpired: (operation) => now().deleteExpired(operation),
    extendExpiry: (owner, sessionId, expiresAt, operation) =>
      now().extendExpiry(owner, sessionId, expiresAt, operation),
    restoreExpired: (owner, sessionId, expiresAt, operation) =>
      now().restoreExpired(owner, sessionId, expiresAt, operation),
    purgeExpired: (owner, sessionId, operation) => now().purgeExpired(owner, sessionId, operation),
    expireForRequest: (owner, requestId, trashedBy, operation) =>
      now().expireForRequest(owner, requestId, trashedBy, operation),
    deleteForRequest: (owner, requestId, operation) => now().deleteForRequest(owner, requestId, operation),
    deleteForSession: (owner, sessionId, operation) => now().deleteForSession(owner, sessionId, operation),
    list: (operation) => now().list(operation),
    listByOwner: (owner, operation) => now().listByOwner(owner, operation),
  };
}

/** The record of `sessionId` as `list` pages give it (a shared database may hold other tests' records). */
async function listedRecord(
  repo: SessionBlobRepository,
  sessionId: string,
): Promise<SessionBlobRecord | null> {
  let cursor: string | undefined;
  do {
    const page = await repo.list({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    const found = page.records.find((record) => record.sessionId === sessionId);
    if (found) return found;
    cursor = page.cursor;
  } while (cursor !== undefined);
  return null;
}

/** A record stored, read back by request and by session, replaced by an upsert. */
function itStoresAndReadsBack(repo: SessionBlobRepository): void {
  it("stores a session and reads it back by request and by session id", async () => {
    const data = input({ codec: "gzip" });
    const before = Date.now();
    const created = await repo.create(data);
    expect(created).toMatchObject({
      owner: OWNER,
      requestId: data.requestId,
      sessionId: data.sessionId,
      agentType: "claude-code",
      codec: "gzip",
      blobSizeBytes: data.blob.byteLength,
      rawSizeBytes: data.rawSizeBytes,
      // Nothing said of what storing it added: the blob itself.
      storedBytes: data.blob.byteLength,
    });
    expect(Number.isSafeInteger(created.id)).toBe(true);
    sameBytes(created.blob, data.blob);
    expect(created.createdAt.getTime()).toBeGreaterThanOrEqual(before - 5 * SECOND);
    for (const found of [
      await repo.getLatestForRequest(OWNER, data.requestId),
      await repo.getBySessionId(OWNER, data.sessionId),
    ]) {
      expect(found).not.toBeNull();
      const { blob, ...rest } = found as SessionBlobRecord;
      const { blob: _ignored, ...expected } = created;
      expect(rest).toEqual(expected);
      sameBytes(blob, data.blob);
    }
  });

  it("stores a preverified blob (an encrypting wrapper's ciphertext) as given, and refuses it without the flag", async () => {
    const sealed = new Uint8Array(randomBytes(3000));
    const data = input({ blob: sealed, rawSizeBytes: 12_345 });
    await expectStowageError(repo.create(data), "INTEGRITY");
    const record = await repo.create(data, { preverified: true });
    expect(record.rawSizeBytes).toBe(12_345);
    expect(record.blobSizeBytes).toBe(3000);
    sameBytes((await repo.getBySessionId(OWNER, data.sessionId))?.blob, sealed);
    // The flag trusts the blob, not the rest: a record out of shape is refused all the same.
    await expectStowageError(
      repo.create({ ...data, rawSizeBytes: -1 }, { preverified: true }),
      "INVALID_INPUT",
    );
  });

  it("returns null for a request or session that has nothing stored", async () => {
    expect(await repo.getLatestForRequest(OWNER, "req-none")).toBeNull();
    expect(await repo.getBySessionId(OWNER, randomUUID())).toBeNull();
    expect(await repo.deleteForRequest(OWNER, "req-none")).toBe(0);
    expect(await repo.deleteForSession(OWNER, randomUUID())).toBe(0);
  });

  it("keeps what was stored even if the caller reuses its buffer", async () => {
    const data = input();
    const original = data.blob.slice();
    await repo.create(data);
    data.blob.fill(0);
    sameBytes((await repo.getBySessionId(OWNER, data.sessionId))?.blob, original);
  });

  it("hands back blobs of the caller's own: changing one changes neither the record nor the next read", async () => {
    const data = input();
    const original = data.blob.slice();
    await repo.create(data);
    const reads = [
      () => repo.getBySessionId(OWNER, data.sessionId),
      () => repo.getLatestForRequest(OWNER, data.requestId),
      () => listedRecord(repo, data.sessionId),
    ];
    for (const read of reads) (await read())!.blob.fill(0);
    for (const read of reads) sameBytes((await read())?.blob, original);
  });

  it("upserts on (owner, request id, session id): the second create replaces the first", async () => {
    const first = await repo.create(
      input({ requestId: "req-upsert", sessionId: "7f0e8c1a-0d5b-4a57-9a49-c2b5f6f1e001" }),
    );
    const replacement = input({
      requestId: "req-upsert",
      ...sampleSessionBlob({ sessionId: "7f0e8c1a-0d5b-4a57-9a49-c2b5f6f1e001", agent: "codex" }),
    });
    const second = await repo.create(replacement);
    expect(second.id).toBe(first.id);
    const found = await repo.getLatestForRequest(OWNER, "req-upsert");
    expect(found?.codec).toBe("gzip");
    expect(found?.agentType).toBe("codex");
    expect(found?.blobSizeBytes).toBe(replacement.blob.byteLength);
    sameBytes(found?.blob, replacement.blob);
    expect(await repo.deleteForRequest(OWNER, "req-upsert")).toBe(1);
  });

  it("getLatestForRequest returns the most recently stored session of the request", async () => {
    const a = input({ requestId: "req-latest" });
    const b = input({ requestId: "req-latest" });
    await repo.create(a);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await repo.create(b);
    await repo.create(input({ requestId: "req-other" }));
    expect((await repo.getLatestForRequest(OWNER, "req-latest"))?.sessionId).toBe(b.sessionId);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await repo.create(recaptured(a, "again"));
    expect((await repo.getLatestForRequest(OWNER, "req-latest"))?.sessionId).toBe(a.sessionId);
  });
}

/** What deleteExpired tells its caller (an audit of deletions), and extending a session's expiry. */
function itReportsAndExtendsExpiry(repo: SessionBlobRepository): void {
  it("deleteExpired tells onDeleted of each batch it deleted, ids and sizes, never the blob", async () => {
    const past = new Date(Date.now() - 60 * SECOND);
    const made = [];
    for (let i = 0; i < 5; i++)
      made.push(await repo.create(input({ requestId: "req-told", expiresAt: past })));
    await repo.create(input({ requestId: "req-told" }));
    const batches: (readonly ExpiredSessionBlob[])[] = [];
    expect(
      await repo.deleteExpired({ batchSize: 2, onDeleted: (deleted) => void batches.push(deleted) }),
    ).toBe(5);
    expect(batches.map((batch) => batch.length)).toEqual([2, 2, 1]);
    const told = batches.flat().sort((a, b) => a.id - b.id);
    expect(told).toEqual(
      made.map((record) => ({
        id: record.id,
        owner: OWNER,
        requestId: "req-told",
        sessionId: record.sessionId,
        blobSizeBytes: record.blob.byteLength,
        storedBytes: record.storedBytes,
        expiresAt: past,
      })),
    );
    expect(told.some((record) => "blob" in record)).toBe(false);
  });

  it("deleteExpired stops at the batch whose onDeleted throws", async () => {
    const past = new Date(Date.now() - 60 * SECOND);
    for (let i = 0; i < 4; i++) await repo.create(input({ requestId: "req-stop", expiresAt: past }));
    const failure = new Error("audit unavailable");
    await expect(
      repo.deleteExpired({
        batchSize: 2,
        onDeleted: () => {
          throw failure;
        },
      }),
    ).rejects.toBe(failure);
    // The first batch went, the second was not started.
    expect(await repo.deleteExpired()).toBe(2);
    await expectStowageError(repo.deleteExpired({ onDeleted: "yes" as never }), "INVALID_INPUT");
  });

  it("extendExpiry moves a live session's expiry later, on every request's record of it", async () => {
    const soon = new Date(Date.now() + 60 * SECOND);
    const first = input({ requestId: "req-extend-a", expiresAt: soon });
    await repo.create(first);
    await repo.create({ ...first, requestId: "req-extend-b" });
    const later = new Date(Date.now() + 30 * 24 * 3600 * SECOND);
    expect(await repo.extendExpiry(OWNER, first.sessionId, later)).toBe(2);
    expect((await repo.getLatestForRequest(OWNER, "req-extend-a"))?.expiresAt?.getTime()).toBe(
      later.getTime(),
    );
    expect((await repo.getLatestForRequest(OWNER, "req-extend-b"))?.expiresAt?.getTime()).toBe(
      later.getTime(),
    );
    // Another owner's, an unknown or an expired session changes nothing.
    expect(await repo.extendExpiry(OTHER, first.sessionId, later)).toBe(0);
    const gone = input({ requestId: "req-extend-gone", expiresAt: new Date(Date.now() - 60 * SECOND) });
    await repo.create(gone);
    expect(await repo.extendExpiry(OWNER, gone.sessionId, later)).toBe(0);
    expect(await repo.getBySessionId(OWNER, gone.sessionId)).toBeNull();
    for (const bad of [new Date(Date.now() - SECOND), new Date(Number.NaN), "2030-01-01" as never]) {
      await expectStowageError(repo.extendExpiry(OWNER, first.sessionId, bad), "INVALID_INPUT");
    }
    for (const sessionId of ["../x", "", "a/b"]) {
      await expectStowageError(repo.extendExpiry(OWNER, sessionId, later), "INVALID_INPUT");
    }
  });
}

/** Expiry, and every way of deleting, concurrent creates included. */
function itStoresChunkedCaptures(repo: SessionBlobRepository): void {
  it("stores a capture kept as chunks (a chunked archive) as it is, which reads back from its chunks", async () => {
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    // A rollout of some size: a session of a few lines is kept as one archive, never chunked.
    const note = randomBytes(1500).toString("hex");
    const sample = input(sampleSessionBlob({ sessionId: randomUUID(), agent: "codex", note }));
    const chunked = await chunkSessionBlob(sample, { blobs });
    const { codec, blob, rawSizeBytes } = chunked;
    const { storedBytes } = chunked;
    const record = await repo.create({ ...sample, codec, blob, rawSizeBytes, storedBytes });
    expect(record).toMatchObject({ rawSizeBytes: sample.rawSizeBytes, storedBytes });
    const stored = await repo.getBySessionId(OWNER, sample.sessionId);
    sameBytes(stored?.blob, chunked.blob);
    // What storing it added, as the capture reported it, in the owner's listing too.
    expect(stored?.storedBytes).toBe(storedBytes);
    const { sessions } = await repo.listByOwner(OWNER);
    expect(sessions.find((s) => s.sessionId === sample.sessionId)?.storedBytes).toBe(storedBytes);
    const [original, read] = await Promise.all([
      readSessionFiles(sample),
      readSessionFiles(stored!, { blobs }),
    ]);
    expect(read.format).toBe("chunked");
    expect(read.files).toEqual(original.files);
  });
}

/**
 * The trash of stored sessions: expired records kept through a grace period, listed to their
 * owner, brought back or purged one session at a time.
 */
function itKeepsExpiredRecordsThroughTheirGrace(repo: SessionBlobRepository): void {
  it("deleteExpired with graceMs keeps what expired within it and deletes what expired before", async () => {
    const owner = ownerOf();
    const long = await repo.create(input({ owner, expiresAt: ago(2 * HOUR) }));
    const recent = await repo.create(input({ owner, expiresAt: ago(60 * SECOND) }));
    const live = await repo.create(input({ owner }));
    const told: ExpiredSessionBlob[] = [];
    const deleted = await repo.deleteExpired({
      graceMs: HOUR,
      onDeleted: (batch) => void told.push(...batch),
    });
    expect(told.filter((record) => record.owner === owner).map((record) => record.id)).toEqual([long.id]);
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect(await repo.deleteExpired({ graceMs: HOUR })).toBe(0);
    const listed = (await repo.listByOwner(owner, { expired: true })).sessions.map((record) => record.id);
    expect(listed).toEqual([recent.id]);
    for (const graceMs of [-1, 1.5, Number.NaN, "60000" as never]) {
      await expectStowageError(repo.deleteExpired({ graceMs }), "INVALID_INPUT");
    }
    await repo.deleteExpired();
    expect((await repo.listByOwner(owner, { expired: true })).sessions).toEqual([]);
    expect((await repo.listByOwner(owner)).sessions.map((record) => record.id)).toEqual([live.id]);
  });

  it("listByOwner({ expired: true }) lists the owner's expired records and only them, without blobs", async () => {
    const owner = ownerOf();
    const live = await repo.create(input({ owner }));
    const expired = await repo.create(
      input({ owner, requestId: "req-expired", expiresAt: ago(60 * SECOND) }),
    );
    await repo.create(input({ owner: `org:grace-${randomUUID()}`, expiresAt: ago(60 * SECOND) }));
    const { sessions } = await repo.listByOwner(owner, { expired: true });
    expect(sessions.map((record) => [record.id, record.requestId])).toEqual([[expired.id, "req-expired"]]);
    expect(sessions[0]).not.toHaveProperty("blob");
    expect(sessions[0]?.expiresAt?.getTime()).toBe(expired.expiresAt?.getTime());
    expect((await repo.listByOwner(owner, { expired: false })).sessions.map((record) => record.id)).toEqual([
      live.id,
    ]);
    for (const bad of ["yes", 1, null]) {
      await expectStowageError(repo.listByOwner(owner, { expired: bad as never }), "INVALID_INPUT");
    }
  });

  it("restoreExpired brings back every request's expired record of a session, byte for byte; live ones and another owner's stay", async () => {
    const owner = ownerOf();
    const sessionId = randomUUID();
    const first = input({ owner, sessionId, requestId: "req-a", expiresAt: ago(60 * SECOND) });
    const second = recaptured({ ...first, requestId: "req-b" }, "second");
    const current = recaptured(
      { ...first, requestId: "req-c", expiresAt: new Date(Date.now() + HOUR) },
      "live",
    );
    for (const data of [first, second, current]) await repo.create(data);
    const other = input({ owner: `org:grace-${randomUUID()}`, sessionId, expiresAt: ago(60 * SECOND) });
    await repo.create(other);
    const later = new Date(Date.now() + 7 * 24 * HOUR);
    expect(await repo.restoreExpired(owner, sessionId, later)).toBe(2);
    for (const data of [first, second]) {
      const back = await repo.getLatestForRequest(owner, data.requestId);
      sameBytes(back?.blob, data.blob);
      expect(back?.expiresAt?.getTime()).toBe(later.getTime());
    }
    expect((await repo.getLatestForRequest(owner, "req-c"))?.expiresAt?.getTime()).toBe(
      current.expiresAt?.getTime(),
    );
    expect(await repo.getBySessionId(other.owner, sessionId)).toBeNull();
    // Nothing left to restore: a second restore, another owner's restore of nothing.
    expect(await repo.restoreExpired(owner, sessionId, later)).toBe(0);
    expect(await repo.restoreExpired(`user:nobody-${randomUUID()}`, sessionId, later)).toBe(0);
    await expectStowageError(repo.restoreExpired(owner, sessionId, ago(SECOND)), "INVALID_INPUT");
    await expectStowageError(repo.restoreExpired(owner, "../x", later), "INVALID_INPUT");
    await expectStowageError(repo.restoreExpired("a/b", sessionId, later), "INVALID_INPUT");
  });

  it("purgeExpired deletes an owner's expired records of a session now; its live ones and another owner's stay", async () => {
    const owner = ownerOf();
    const sessionId = randomUUID();
    const expired = input({ owner, sessionId, requestId: "req-old", expiresAt: ago(60 * SECOND) });
    const live = recaptured(
      { ...expired, requestId: "req-new", expiresAt: new Date(Date.now() + HOUR) },
      "new",
    );
    const other = input({ owner: `org:grace-${randomUUID()}`, sessionId, expiresAt: ago(60 * SECOND) });
    for (const data of [expired, live, other]) await repo.create(data);
    expect(await repo.purgeExpired(owner, sessionId)).toBe(1);
    expect(await repo.purgeExpired(owner, sessionId)).toBe(0);
    expect((await repo.listByOwner(owner, { expired: true })).sessions).toEqual([]);
    sameBytes((await repo.getLatestForRequest(owner, "req-new"))?.blob, live.blob);
    expect((await repo.listByOwner(other.owner, { expired: true })).sessions.map((r) => r.sessionId)).toEqual(
      [sessionId],
    );
    await expectStowageError(repo.purgeExpired(owner, "a/b"), "INVALID_INPUT");
  });
}

/** A deletion into the trash of stored sessions: a request's live records expire now, saying who. */
function itDeletesIntoTheTrash(repo: SessionBlobRepository): void {
  it("expireForRequest moves an owner's live records of a request to the trash now, saying who; other requests and owners stay", async () => {
    const owner = ownerOf();
    const other = `org:grace-${randomUUID()}`;
    const first = input({ owner, requestId: "req-delete" });
    const second = input({ owner, requestId: "req-delete" });
    const kept = input({ owner, requestId: "req-kept" });
    const oldExpiry = ago(60 * SECOND);
    const alreadyExpired = input({ owner, requestId: "req-delete", expiresAt: oldExpiry });
    const othersSameRequest = input({ owner: other, requestId: "req-delete" });
    for (const data of [first, second, kept, alreadyExpired, othersSameRequest]) await repo.create(data);
    const before = Date.now();
    expect(await repo.expireForRequest(owner, "req-delete", "key:k1")).toBe(2);
    expect(await repo.getLatestForRequest(owner, "req-delete")).toBeNull();
    expect(await repo.getBySessionId(owner, first.sessionId)).toBeNull();
    const trashed = (await repo.listByOwner(owner, { expired: true })).sessions;
    const bySession = new Map(trashed.map((record) => [record.sessionId, record]));
    for (const data of [first, second]) {
      const record = bySession.get(data.sessionId);
      expect(record?.trashedBy).toBe("key:k1");
      // Expired now: by the database's clock or the process's, within the test's minute.
      expect(Math.abs((record?.expiresAt?.getTime() ?? 0) - before)).toBeLessThan(60 * SECOND);
    }
    // What had expired by its TTL keeps its expiry, and no one deleted it.
    expect(bySession.get(alreadyExpired.sessionId)?.trashedBy).toBeUndefined();
    expect(bySession.get(alreadyExpired.sessionId)?.expiresAt?.getTime()).toBe(oldExpiry.getTime());
    sameBytes((await repo.getLatestForRequest(owner, "req-kept"))?.blob, kept.blob);
    sameBytes((await repo.getLatestForRequest(other, "req-delete"))?.blob, othersSameRequest.blob);
    // Nothing live is left to delete; another owner's delete of it changes nothing of this one's.
    expect(await repo.expireForRequest(owner, "req-delete", "key:k1")).toBe(0);
    expect(await repo.expireForRequest(`user:nobody-${randomUUID()}`, "req-kept", "key:k1")).toBe(0);
    // A restore brings it back byte for byte and forgets who deleted it.
    const later = new Date(Date.now() + 7 * 24 * HOUR);
    expect(await repo.restoreExpired(owner, first.sessionId, later)).toBe(1);
    const back = await repo.getBySessionId(owner, first.sessionId);
    sameBytes(back?.blob, first.blob);
    expect(back?.trashedBy).toBeUndefined();
    expect(back?.expiresAt?.getTime()).toBe(later.getTime());
    // The sweep purges it once its grace is over, as any expired record.
    await repo.deleteExpired({ graceMs: 0 });
    expect((await repo.listByOwner(owner, { expired: true })).sessions).toEqual([]);
    for (const by of ["", "a/b", "../x", "x".repeat(256), 7, null]) {
      await expectStowageError(repo.expireForRequest(owner, "req-kept", by as string), "INVALID_INPUT");
    }
    expect(await repo.getLatestForRequest(owner, "req-kept")).not.toBeNull();
  });

  it("a new capture of a deleted request and session replaces the trashed record and is live, deleted by no one", async () => {
    const owner = ownerOf();
    const data = input({ owner, requestId: "req-again" });
    await repo.create(data);
    expect(await repo.expireForRequest(owner, "req-again", "cli")).toBe(1);
    const again = recaptured(data, "again");
    await repo.create(again);
    const record = await repo.getLatestForRequest(owner, "req-again");
    sameBytes(record?.blob, again.blob);
    expect(record?.trashedBy).toBeUndefined();
    expect((await repo.listByOwner(owner, { expired: true })).sessions).toEqual([]);
  });
}

function itExpiresAndDeletes(repo: SessionBlobRepository): void {
  it("expires after 7 days by default; an explicit expiresAt or null is kept", async () => {
    const defaulted = await repo.create(input());
    const expected = Date.now() + DEFAULT_SESSION_TTL_MS;
    expect(Math.abs(defaulted.expiresAt!.getTime() - expected)).toBeLessThan(60 * SECOND);
    const at = new Date(Date.now() + 3600 * SECOND);
    expect((await repo.create(input({ expiresAt: at }))).expiresAt?.getTime()).toBe(at.getTime());
    const forever = input({ expiresAt: null });
    expect((await repo.create(forever)).expiresAt).toBeNull();
    expect((await repo.getBySessionId(OWNER, forever.sessionId))?.expiresAt).toBeNull();
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
    expect(await repo.getBySessionId(OWNER, expired.sessionId)).toBeNull();
    expect((await repo.getLatestForRequest(OWNER, "req-ttl"))?.sessionId).toBe(live.sessionId);
    expect(await repo.deleteExpired()).toBe(1);
    expect(await repo.deleteExpired()).toBe(0);
    expect((await repo.getBySessionId(OWNER, live.sessionId))?.sessionId).toBe(live.sessionId);
    expect((await repo.getBySessionId(OWNER, forever.sessionId))?.sessionId).toBe(forever.sessionId);
    // The expired record is really gone: storing it again creates a fresh record.
    expect(await repo.deleteForRequest(OWNER, "req-ttl")).toBe(1);
  });

  it("deleteExpired works in bounded batches and can stop after maxBatches", async () => {
    const past = new Date(Date.now() - 60 * SECOND);
    for (let i = 0; i < 25; i++) await repo.create(input({ requestId: "req-batch", expiresAt: past }));
    expect(await repo.deleteExpired({ batchSize: 10, maxBatches: 1 })).toBe(10);
    expect(await repo.deleteExpired({ batchSize: 10 })).toBe(15);
    expect(await repo.deleteExpired({ batchSize: 10 })).toBe(0);
    for (const batchSize of [0, -1, 1.5, 100_001, Number.NaN]) {
      await expectStowageError(repo.deleteExpired({ batchSize }), "INVALID_INPUT");
    }
    await expectStowageError(repo.deleteExpired({ maxBatches: 0 }), "INVALID_INPUT");
  });

  it("deleteForRequest removes every session of that request and nothing else", async () => {
    for (let i = 0; i < 3; i++) await repo.create(input({ requestId: "req-delete" }));
    const other = input({ requestId: "req-keep" });
    await repo.create(other);
    expect(await repo.deleteForRequest(OWNER, "req-delete")).toBe(3);
    expect(await repo.getLatestForRequest(OWNER, "req-delete")).toBeNull();
    expect((await repo.getLatestForRequest(OWNER, "req-keep"))?.sessionId).toBe(other.sessionId);
  });

  it("deleteForSession removes the owner's records of that session, whatever request, and nothing else", async () => {
    const sessionId = randomUUID();
    // The session stored for two requests (one record expired), beside another session of the first.
    const first = input({ requestId: "req-session-a", sessionId });
    await repo.create(first);
    await repo.create(recaptured({ ...first, requestId: "req-session-b" }, "second request"));
    const past = new Date(Date.now() - 60 * SECOND);
    await repo.create(recaptured({ ...first, requestId: "req-session-c", expiresAt: past }, "expired"));
    const neighbour = input({ requestId: "req-session-a" });
    await repo.create(neighbour);
    // Three records: the two live ones and the expired one, which a deleted session must not leave.
    expect(await repo.deleteForSession(OWNER, sessionId)).toBe(3);
    expect(await repo.getBySessionId(OWNER, sessionId)).toBeNull();
    expect(await repo.getLatestForRequest(OWNER, "req-session-b")).toBeNull();
    sameBytes((await repo.getLatestForRequest(OWNER, "req-session-a"))?.blob, neighbour.blob);
    sameBytes((await repo.getBySessionId(OWNER, neighbour.sessionId))?.blob, neighbour.blob);
    // Idempotent: nothing is left to delete, and that is no error.
    expect(await repo.deleteForSession(OWNER, sessionId)).toBe(0);
    expect(await repo.deleteForRequest(OWNER, "req-session-a")).toBe(1);
  });

  it("concurrent creates of one (request, session) leave one record holding a writer's blob", async () => {
    const sessionId = randomUUID();
    const writers = Array.from({ length: 8 }, (_, i) =>
      input({ requestId: "req-race", ...sampleSessionBlob({ sessionId, note: `writer ${i}` }) }),
    );
    const results = await Promise.all(writers.map((writer) => repo.create(writer)));
    expect(new Set(results.map((result) => result.id)).size).toBe(1);
    const stored = await repo.getBySessionId(OWNER, sessionId);
    const winner = writers.find((writer) => Buffer.from(writer.blob).equals(Buffer.from(stored!.blob)));
    expect(winner).toBeDefined();
    expect(stored?.rawSizeBytes).toBe(winner?.rawSizeBytes);
    expect(await repo.deleteForRequest(OWNER, "req-race")).toBe(1);
  });
}

/** The id rules from the outside: request ids and owners up to 255 safe-id characters, the three agents. */
function itTakesSafeIdsAndTheThreeAgents(repo: SessionBlobRepository): void {
  it("takes request ids up to 255 characters of the safe-id alphabet, and the three agents", async () => {
    // Written from the rule: letters, digits and "._:@-", starting with a letter or digit.
    const requestId = `r${"x".repeat(254)}`;
    await repo.create(input({ requestId }));
    expect((await repo.getLatestForRequest(OWNER, requestId))?.agentType).toBe("claude-code");
    for (const agent of ["codex", "opencode"] as const) {
      const stored = await repo.create(
        input({
          requestId: "job:42@eu-1.v2_x",
          ...sampleSessionBlob({ sessionId: `ses_${agent}`, agent }),
        }),
      );
      expect(stored.agentType).toBe(agent);
      expect((await repo.getBySessionId(OWNER, `ses_${agent}`))?.agentType).toBe(agent);
    }
    await expectStowageError(repo.create(input({ requestId: `${requestId}x` })), "INVALID_INPUT");
    await expectStowageError(repo.getLatestForRequest(OWNER, `${requestId}x`), "INVALID_INPUT");
    await expectStowageError(repo.deleteForRequest(OWNER, `${requestId}x`), "INVALID_INPUT");
    // An agent type this package cannot restore is refused, as is a hostile one.
    for (const agentType of [
      "claude-code-2",
      `a${"b".repeat(63)}`,
      "",
      "-claude",
      "claude code",
      "claude/code",
    ]) {
      await expectStowageError(repo.create(input({ agentType })), "INVALID_INPUT");
    }
    expect(await repo.deleteForRequest(OWNER, requestId)).toBe(1);
    expect(await repo.deleteForRequest(OWNER, "job:42@eu-1.v2_x")).toBe(2);
  });

  it("takes owners up to 255 characters of the safe-id alphabet", async () => {
    // Written from the rule: letters, digits and "._:@-", starting with a letter or digit.
    const owner = `o${"w".repeat(254)}`;
    const data = input({ owner, requestId: "req-long-owner" });
    expect((await repo.create(data)).owner).toBe(owner);
    expect((await repo.getLatestForRequest(owner, "req-long-owner"))?.owner).toBe(owner);
    await expectStowageError(repo.create(input({ owner: `${owner}x` })), "INVALID_INPUT");
    await expectStowageError(repo.getLatestForRequest(`${owner}x`, "req-long-owner"), "INVALID_INPUT");
    expect(await repo.deleteForRequest(owner, "req-long-owner")).toBe(1);
  });
}

function describeOwnersNeverMeet(repo: SessionBlobRepository): void {
  describe("owners never meet", () => {
    it("the same request and session id under two owners are two records, each read back by its owner only", async () => {
      const sessionId = randomUUID();
      const mine = input({ requestId: "req-shared", sessionId });
      const theirs = input({ owner: OTHER, requestId: "req-shared", sessionId });
      const a = await repo.create(mine);
      const b = await repo.create(theirs);
      expect(b.id).not.toBe(a.id);
      expect(b.owner).toBe(OTHER);
      sameBytes((await repo.getLatestForRequest(OWNER, "req-shared"))?.blob, mine.blob);
      sameBytes((await repo.getBySessionId(OWNER, sessionId))?.blob, mine.blob);
      sameBytes((await repo.getLatestForRequest(OTHER, "req-shared"))?.blob, theirs.blob);
      sameBytes((await repo.getBySessionId(OTHER, sessionId))?.blob, theirs.blob);
      // A later create by one owner replaces its own record only.
      const again = await repo.create(recaptured(theirs, "again"));
      expect(again.id).toBe(b.id);
      sameBytes((await repo.getBySessionId(OWNER, sessionId))?.blob, mine.blob);
    });

    it("another owner's request and session ids read as absent: null, never an error", async () => {
      const data = input({ requestId: "req-alice-only" });
      await repo.create(data);
      expect(await repo.getLatestForRequest(OTHER, "req-alice-only")).toBeNull();
      expect(await repo.getBySessionId(OTHER, data.sessionId)).toBeNull();
      expect(await repo.deleteForRequest(OTHER, "req-alice-only")).toBe(0);
      sameBytes((await repo.getLatestForRequest(OWNER, "req-alice-only"))?.blob, data.blob);
    });

    it("deleteForRequest deletes the owner's records of that request and leaves the other owner's", async () => {
      const mine = input({ requestId: "req-both" });
      const theirs = input({ owner: OTHER, requestId: "req-both" });
      await repo.create(mine);
      await repo.create(theirs);
      expect(await repo.deleteForRequest(OTHER, "req-both")).toBe(1);
      expect(await repo.getLatestForRequest(OTHER, "req-both")).toBeNull();
      sameBytes((await repo.getLatestForRequest(OWNER, "req-both"))?.blob, mine.blob);
      expect(await repo.deleteForRequest(OWNER, "req-both")).toBe(1);
    });

    it("deleteForSession deletes the owner's records of that session and leaves the other owner's", async () => {
      const sessionId = randomUUID();
      const mine = input({ requestId: "req-both-sessions", sessionId });
      const theirs = input({ owner: OTHER, requestId: "req-both-sessions", sessionId });
      await repo.create(mine);
      await repo.create(theirs);
      expect(await repo.deleteForSession(OTHER, sessionId)).toBe(1);
      expect(await repo.getBySessionId(OTHER, sessionId)).toBeNull();
      sameBytes((await repo.getBySessionId(OWNER, sessionId))?.blob, mine.blob);
      // Another owner's session id reads as absent: 0, never an error.
      expect(await repo.deleteForSession(OTHER, sessionId)).toBe(0);
      sameBytes((await repo.getBySessionId(OWNER, sessionId))?.blob, mine.blob);
      expect(await repo.deleteForSession(OWNER, sessionId)).toBe(1);
    });

    it("deleteExpired works across owners", async () => {
      const past = new Date(Date.now() - 60 * SECOND);
      await repo.create(input({ requestId: "req-expired-both", expiresAt: past }));
      await repo.create(input({ owner: OTHER, requestId: "req-expired-both", expiresAt: past }));
      expect(await repo.deleteExpired()).toBe(2);
    });
  });
}

function describeListForGarbageCollection(repo: SessionBlobRepository): void {
  describe("list: every stored record of every owner, for garbage collection roots", () => {
    /** Records of `owners` only: a shared database may hold other tests' records too. */
    async function listAll(limit: number, owners: string[]): Promise<SessionBlobRecord[]> {
      const seen: SessionBlobRecord[] = [];
      let cursor: string | undefined;
      do {
        const page = await repo.list({ limit, ...(cursor === undefined ? {} : { cursor }) });
        expect(page.records.length).toBeLessThanOrEqual(limit);
        seen.push(...page.records);
        cursor = page.cursor;
      } while (cursor !== undefined);
      const ids = seen.map((record) => record.id);
      expect(ids, "pages in id order, each record once").toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
      return seen.filter((record) => owners.includes(record.owner));
    }

    it("pages through every owner's records, expired ones not yet deleted too, each once, in id order, with their blobs", async () => {
      const owners = [`user:list-${randomUUID()}`, `org:list-${randomUUID()}`];
      const stored: CreateSessionBlobInput[] = [];
      for (let i = 0; i < 7; i++) {
        // One that never expires; one expired (a restore may bring it back, so its refs are roots).
        const expiry =
          i === 3 ? { expiresAt: null } : i === 5 ? { expiresAt: new Date(Date.now() - 60 * SECOND) } : {};
        const data = input({ owner: owners[i % 2]!, ...expiry });
        stored.push(data);
        await repo.create(data);
      }
      for (const limit of [1, 2, 3, 100]) {
        const listed = await listAll(limit, owners);
        expect(listed.map((record) => record.sessionId)).toEqual(stored.map((data) => data.sessionId));
        listed.forEach((record, i) => {
          expect(record.owner).toBe(stored[i]!.owner);
          sameBytes(record.blob, stored[i]!.blob);
        });
      }
      const iterated: string[] = [];
      for await (const record of iterateSessionBlobs(repo, { limit: 2 })) {
        if (owners.includes(record.owner)) iterated.push(record.sessionId);
      }
      expect(iterated).toEqual(stored.map((data) => data.sessionId));
    });

    it("a record replaced by an upsert keeps its place and is listed once, with the new blob", async () => {
      const owner = `user:list-${randomUUID()}`;
      const first = input({ owner });
      const second = input({ owner });
      await repo.create(first);
      await repo.create(second);
      const replacement = recaptured(first, "replacement");
      await repo.create(replacement);
      const listed = await listAll(1, [owner]);
      expect(listed.map((record) => record.sessionId)).toEqual([first.sessionId, second.sessionId]);
      sameBytes(listed[0]!.blob, replacement.blob);
    });

    it("a page that starts after the last record holds none of it", async () => {
      const owner = `user:list-${randomUUID()}`;
      const created = await repo.create(input({ owner }));
      const after = await repo.list({ cursor: String(created.id) });
      expect(after.records.filter((record) => record.owner === owner)).toEqual([]);
    });

    it("rejects a bad limit or cursor", async () => {
      for (const limit of [0, -1, 1.5, MAX_SESSION_BLOB_PAGE_SIZE + 1, Number.NaN, "10"]) {
        await expectStowageError(repo.list({ limit: limit as number }), "INVALID_INPUT");
      }
      for (const cursor of ["", "0", "-1", "01", "1.5", "abc", "1e3", " 1", "99999999999999999", 5]) {
        await expectStowageError(repo.list({ cursor: cursor as string }), "INVALID_INPUT", "INVALID_CURSOR");
      }
    });
  });
}

function describeListByOwner(repo: SessionBlobRepository): void {
  describe("listByOwner: an owner's live stored sessions, without their blobs", () => {
    it("pages through the owner's live records in id order, none of another owner's, no blob", async () => {
      const owner = `user:owned-${randomUUID()}`;
      const stored: CreateSessionBlobInput[] = [];
      for (let i = 0; i < 5; i++) {
        const data = input({
          owner,
          ...sampleSessionBlob({ sessionId: `ses_owned_${i}`, agent: i % 2 ? "codex" : "claude-code" }),
        });
        stored.push(data);
        await repo.create(data);
      }
      await repo.create(input({ owner: `org:other-${randomUUID()}` }));
      await repo.create(input({ owner, expiresAt: new Date(Date.now() - 60 * SECOND) }));
      for (const limit of [1, 2, 5, 100]) {
        const listed = [];
        let cursor: string | undefined;
        do {
          const page = await repo.listByOwner(owner, {
            limit,
            ...(cursor === undefined ? {} : { cursor }),
          });
          expect(page.sessions.length).toBeLessThanOrEqual(limit);
          listed.push(...page.sessions);
          cursor = page.cursor;
        } while (cursor !== undefined);
        expect(listed.map((summary) => [summary.sessionId, summary.agentType, summary.requestId])).toEqual(
          stored.map((data) => [data.sessionId, data.agentType, data.requestId]),
        );
        for (const summary of listed) {
          expect(summary).not.toHaveProperty("blob");
          expect(summary).toMatchObject({
            owner,
            codec: expect.any(String),
            blobSizeBytes: expect.any(Number),
          });
        }
      }
      expect(await repo.listByOwner(`user:nobody-${randomUUID()}`)).toEqual({ sessions: [] });
    });

    it("rejects a bad owner, limit or cursor", async () => {
      for (const owner of ["", "a/b", "../x", "x".repeat(300), 5]) {
        await expectStowageError(repo.listByOwner(owner as string), "INVALID_INPUT");
      }
      await expectStowageError(repo.listByOwner(OWNER, { limit: 0 }), "INVALID_INPUT");
      await expectStowageError(repo.listByOwner(OWNER, { cursor: "abc" }), "INVALID_INPUT", "INVALID_CURSOR");
    });
  });
}

function describeHostileInput(repo: SessionBlobRepository): void {
  describe("rejects hostile and malformed input with a typed error, storing nothing", () => {
    for (const { value, why } of HOSTILE_IDS) {
      it(`id: ${why}`, async () => {
        const data = input({ requestId: "req-hostile" });
        await expectStowageError(repo.create({ ...data, owner: value as string }), "INVALID_INPUT");
        await expectStowageError(repo.create({ ...data, requestId: value as string }), "INVALID_INPUT");
        await expectStowageError(repo.create({ ...data, sessionId: value as string }), "INVALID_INPUT");
        await expectStowageError(repo.create({ ...data, agentType: value as string }), "INVALID_INPUT");
        await expectStowageError(repo.getLatestForRequest(OWNER, value as string), "INVALID_INPUT");
        await expectStowageError(repo.getBySessionId(OWNER, value as string), "INVALID_INPUT");
        await expectStowageError(repo.deleteForRequest(OWNER, value as string), "INVALID_INPUT");
        await expectStowageError(repo.expireForRequest(OWNER, value as string, "cli"), "INVALID_INPUT");
        await expectStowageError(
          repo.expireForRequest(value as string, "req-hostile", "cli"),
          "INVALID_INPUT",
        );
        await expectStowageError(
          repo.expireForRequest(OWNER, "req-hostile", value as string),
          "INVALID_INPUT",
        );
        await expectStowageError(repo.deleteForSession(OWNER, value as string), "INVALID_INPUT");
        await expectStowageError(repo.getLatestForRequest(value as string, "req-hostile"), "INVALID_INPUT");
        await expectStowageError(repo.getBySessionId(value as string, data.sessionId), "INVALID_INPUT");
        await expectStowageError(repo.deleteForRequest(value as string, "req-hostile"), "INVALID_INPUT");
        await expectStowageError(repo.deleteForSession(value as string, data.sessionId), "INVALID_INPUT");
        expect(await repo.getLatestForRequest(OWNER, "req-hostile")).toBeNull();
      });
    }
    it("a wrong codec tag, a bad blob, a bad size or expiry", async () => {
      const data = input({ requestId: "req-bad" });
      const cases: [Partial<Record<keyof CreateSessionBlobInput, unknown>>, StowageErrorCode][] = [
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
        [{ storedBytes: -1 }, "INVALID_INPUT"],
        [{ storedBytes: 1.5 }, "INVALID_INPUT"],
        [{ storedBytes: "12" }, "INVALID_INPUT"],
        // Blobs that could not be restored are refused when stored, never at the follow-up run.
        [{ blob: new Uint8Array(randomBytes(2048)), rawSizeBytes: 999_999_999 }, "TOO_LARGE"],
        [{ blob: new Uint8Array(randomBytes(2048)), rawSizeBytes: 4096 }, "INTEGRITY"],
        [{ blob: new Uint8Array(gzipSync("not json\n")), rawSizeBytes: 9 }, "INVALID_INPUT"],
        [{ rawSizeBytes: data.rawSizeBytes + 1 }, "INTEGRITY"],
        [{ codec: "brotli" }, "INTEGRITY"],
        [{ agentType: "codex" }, "INVALID_INPUT"],
        [
          { ...sampleSessionBlob({ sessionId: data.sessionId, agent: "opencode" }), agentType: "codex" },
          "INVALID_INPUT",
        ],
        [{ sessionId: "another-session" }, "INVALID_INPUT"],
      ];
      for (const [override, code] of cases) {
        await expectStowageError(repo.create({ ...data, ...override } as CreateSessionBlobInput), code);
      }
      await expectStowageError(repo.create(null as unknown as CreateSessionBlobInput), "INVALID_INPUT");
      expect(await repo.getLatestForRequest(OWNER, "req-bad")).toBeNull();
    });
  });
}

function itStopsWhenAborted(repo: SessionBlobRepository): void {
  it("an already-aborted signal fails with ABORTED and stores or deletes nothing", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    const { signal } = controller;
    const data = input({ requestId: "req-abort" });
    await expectStowageError(repo.create(data, { signal }), "ABORTED");
    await expectStowageError(repo.getLatestForRequest(OWNER, "req-abort", { signal }), "ABORTED");
    await expectStowageError(repo.deleteExpired({ signal }), "ABORTED");
    expect(await repo.getLatestForRequest(OWNER, "req-abort")).toBeNull();
    const kept = input({ requestId: "req-abort-kept" });
    await repo.create(kept);
    await expectStowageError(repo.deleteForSession(OWNER, kept.sessionId, { signal }), "ABORTED");
    sameBytes((await repo.getBySessionId(OWNER, kept.sessionId))?.blob, kept.blob);
  });
}

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
    const repo = repositoryPerTest(options);
    itStoresAndReadsBack(repo);
    itStoresChunkedCaptures(repo);
    itExpiresAndDeletes(repo);
    itReportsAndExtendsExpiry(repo);
    itKeepsExpiredRecordsThroughTheirGrace(repo);
    itDeletesIntoTheTrash(repo);
    itTakesSafeIdsAndTheThreeAgents(repo);
    describeOwnersNeverMeet(repo);
    describeListForGarbageCollection(repo);
    describeListByOwner(repo);
    describeHostileInput(repo);
    itStopsWhenAborted(repo);
  });
}
