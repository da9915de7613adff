import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { gunzipSync } from "node:zlib";
import { collectGarbage } from "@stowage/blob-store";
import { createMemoryNotifier, type Env } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { compressChunks, createMemorySessionBlobRepository } from "@stowage/sessions";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory, withoutJournal } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { describe, expect, it } from "vitest";
import { createStowage, DEFAULT_STORES } from "../../src/index.js";
import { createSharedStores } from "../../src/shared/index.js";

// An fs deployment with encryption on: every store of the table, the blobs and the stored
// sessions go through the seal; the bytes on disk hold no plaintext of a known secret.
const base = await tempDirectory("stowage-encrypted-deployment-");
const alice = { kind: "user", id: "alice" } as const;
const bob = { kind: "user", id: "bob" } as const;
const OLD = randomBytes(32).toString("base64");
const NEW = randomBytes(32).toString("base64");
// A marker no redaction rule touches, so that every store keeps it as written.
const SECRET = `known-secret-${randomUUID()}`;
const text = (value: string) => new TextEncoder().encode(value);
const { uploads: _u, promptMetrics: _p, ...stores } = DEFAULT_STORES;

function deployment() {
  const dir = join(base, randomUUID());
  mkdirSync(join(dir, "agent-sessions"), { recursive: true });
  const sessionBlobs = createMemorySessionBlobRepository();
  // Each call is another process of the deployment: its own stores and key caches over the same data.
  const open = (env: Env = { STOWAGE_ENCRYPTION_KEY: OLD }) =>
    createStowage({
      shared: createFsObjectStore({ root: join(dir, "shared") }),
      notifier: createMemoryNotifier(),
      agentSessionsDir: join(dir, "agent-sessions"),
      sessionBlobs,
      stores,
      encryption: { env },
    });
  return { dir, sessionBlobs, open };
}

async function files(root: string): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    found.set(relative(root, path), await readFile(path));
  }
  return found;
}

/** Writes the secret through every store of alice's tenant that keeps content; returns what to read back. */
async function writeEverywhere(
  stowage: ReturnType<ReturnType<typeof deployment>["open"]>,
  sessionId: string,
) {
  const tenant = stowage.tenant(alice);
  await tenant.registeredSessions.register(sessionId);
  const blob = await tenant.blobs.put(text(`a file the agent read: ${SECRET}`));
  await tenant.threads.post(
    { jobId: sessionId, alias: "main" },
    textItem(`${SECRET} blob:sha256:${blob.hash}`),
  );
  await tenant.hotState
    .dispatcherFor(sessionId)
    .write({ session_id: sessionId, objective: SECRET }, { expectedVersion: 0 });
  await tenant.openaiAgentsSessions.session(sessionId).addItems([{ role: "user", content: SECRET }]);
  const archive = text(`{"secret":"${SECRET}"}\n`);
  await tenant.sessionBlobs.create({
    requestId: "req-1",
    sessionId,
    agentType: "claude-code",
    codec: "gzip",
    blob: await compressChunks("gzip", [archive]),
    rawSizeBytes: archive.byteLength,
  });
  return blob.hash;
}

describe("an encrypted deployment", () => {
  it("keeps no plaintext of a secret in any store, and reads everything back in another process", async () => {
    const { dir, sessionBlobs, open } = deployment();
    const sessionId = randomUUID();
    const hash = await writeEverywhere(open(), sessionId);

    const onDisk = await files(join(dir, "shared"));
    expect(onDisk.size).toBeGreaterThan(5);
    for (const [path, bytes] of onDisk) expect(bytes.includes(SECRET), path).toBe(false);
    // The repository's row holds the archive sealed: not its gzip bytes (what is stored in clear).
    const row = (await sessionBlobs.getBySessionId("user:alice", sessionId))!;
    const archive = (await open().tenant(alice).sessionBlobs.getBySessionId(sessionId))!.blob;
    expect(row.blob.byteLength).toBe(archive.byteLength + 37 + 16);
    expect(Buffer.from(row.blob).includes(Buffer.from(archive.subarray(10, 40)))).toBe(false);
    // Only key records are stored unsealed, and they hold no key in clear.
    const records = [...onDisk.keys()].filter((path) => path.startsWith("encryption-keys/"));
    expect(records.map((path) => path.split("/").slice(0, -1).join("/")).sort()).toEqual([
      "encryption-keys/deployment",
      "encryption-keys/user/alice",
    ]);

    const tenant = open().tenant(alice);
    expect(Buffer.from((await tenant.blobs.get(hash))!).toString()).toContain(SECRET);
    const [item] = (await tenant.threads.items({ jobId: sessionId, alias: "main" })).items;
    expect(JSON.stringify(item)).toContain(SECRET);
    expect((await tenant.hotState.reader.latest(sessionId))?.json).toContain(SECRET);
    expect(await tenant.openaiAgentsSessions.session(sessionId).getItems()).toEqual([
      { role: "user", content: SECRET },
    ]);
    const stored = (await tenant.sessionBlobs.getBySessionId(sessionId))!;
    expect(gunzipSync(stored.blob).toString()).toContain(SECRET);
    expect(stored.blobSizeBytes).toBe(stored.blob.byteLength);
    expect((await tenant.sessionBlobs.list()).sessions[0]?.blobSizeBytes).toBe(stored.blob.byteLength);

    // Another principal reaches none of it.
    const bobs = open().tenant(bob);
    expect(await bobs.hotState.reader.latest(sessionId)).toBeNull();
    expect(await bobs.sessionBlobs.getBySessionId(sessionId)).toBeNull();
    expect(await bobs.blobs.get(hash)).toBeNull();
  });

  it("collects garbage through the seal: a blob a sealed thread item names is kept, an unnamed one goes", async () => {
    const { open } = deployment();
    const stowage = open();
    const kept = await writeEverywhere(stowage, randomUUID());
    const orphan = await stowage.tenant(alice).blobs.put(text(`nobody names this ${SECRET}`));
    // A blob stamped in the millisecond the collection starts is young even with no grace.
    await sleep(5);
    const report = await collectGarbage({
      blobs: stowage.blobs,
      roots: stowage.blobRoots(),
      graceMs: 0,
      timestampSlackMs: 0,
    });
    expect(report.deleted).toBe(1);
    expect(await stowage.blobs.has(kept)).toBe(true);
    expect(await stowage.blobs.has(orphan.hash)).toBe(false);
  });

  it("rotation re-wraps key records only: content is byte-identical, readable with the new key alone, not with the old", async () => {
    const { dir, open } = deployment();
    const sessionId = randomUUID();
    const hash = await writeEverywhere(open(), sessionId);
    const before = await files(join(dir, "shared"));

    const rotating = open({ STOWAGE_ENCRYPTION_KEY: `${NEW},${OLD}` });
    const report = await rotating.rotateEncryptionKeys();
    expect(report).toMatchObject({ rewrapped: 2, alreadyCurrent: 0 });
    expect(report.keyId).toMatch(/^k[0-9a-f]{12}$/);
    expect(await rotating.rotateEncryptionKeys()).toMatchObject({ rewrapped: 0, alreadyCurrent: 2 });

    const after = await files(join(dir, "shared"));
    // The fs store's put journal is its own bookkeeping (segments come and go), not content.
    const stored = (found: Map<string, Buffer>) => withoutJournal([...found.keys()]).sort();
    expect(stored(after)).toEqual(stored(before));
    for (const path of stored(after)) {
      const bytes = after.get(path)!;
      if (path.startsWith("encryption-keys/")) expect(bytes.equals(before.get(path)!), path).toBe(false);
      else expect(bytes.equals(before.get(path)!), path).toBe(true);
    }

    const newOnly = open({ STOWAGE_ENCRYPTION_KEY: NEW }).tenant(alice);
    expect(Buffer.from((await newOnly.blobs.get(hash))!).toString()).toContain(SECRET);
    expect((await newOnly.hotState.reader.latest(sessionId))?.json).toContain(SECRET);
    const oldOnly = open({ STOWAGE_ENCRYPTION_KEY: OLD }).tenant(alice);
    await expectStowageError(oldOnly.blobs.get(hash), "FORBIDDEN");
    await expectStowageError(oldOnly.hotState.reader.latest(sessionId), "FORBIDDEN");
    await expectStowageError(oldOnly.sessionBlobs.getBySessionId(sessionId), "FORBIDDEN");
  });

  it("two processes sealing a principal's first objects at once each read both", async () => {
    const { dir, open } = deployment();
    const [one, two] = [open(), open()];
    const writes = Array.from({ length: 8 }, (_, i) =>
      (i % 2 ? one : two).tenant(bob).blobs.put(text(`${SECRET}-${i}`)),
    );
    const hashes = (await Promise.all(writes)).map((put) => put.hash);
    const third = open().tenant(bob);
    for (const [i, hash] of hashes.entries()) {
      expect(Buffer.from((await third.blobs.get(hash))!).toString()).toBe(`${SECRET}-${i}`);
      expect(Buffer.from((await one.tenant(bob).blobs.get(hash))!).toString()).toBe(`${SECRET}-${i}`);
    }
    // At most one data key per process for the deployment's blobs, each kept.
    const records = [...(await files(join(dir, "shared"))).keys()].filter((path) =>
      path.startsWith("encryption-keys/deployment/"),
    );
    expect(records.length).toBeGreaterThanOrEqual(1);
    expect(records.length).toBeLessThanOrEqual(2);
  });

  it("the CLI's view (createSharedStores with the same options) reads what the deployment sealed", async () => {
    const { dir, open } = deployment();
    const hash = await writeEverywhere(open(), randomUUID());
    const cli = createSharedStores({
      shared: createFsObjectStore({ root: join(dir, "shared") }),
      encryption: { env: { STOWAGE_ENCRYPTION_KEY: OLD } },
    });
    const bytes = (await cli.blobs.get(hash))!;
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(hash);
    const clear = createSharedStores({ shared: createFsObjectStore({ root: join(dir, "shared") }) });
    await expectStowageError(clear.rotateEncryptionKeys(), "INVALID_INPUT");
  });

  it("a request's stored sessions deleted into the trash come back sealed and readable", async () => {
    const { open, sessionBlobs } = deployment();
    const stowage = open();
    const sessionId = randomUUID();
    await writeEverywhere(stowage, sessionId);
    const before = await stowage.tenant(alice).sessionBlobs.getBySessionId(sessionId);
    const report = await stowage.deleteSessionBlobs(alice, "req-1", { by: "key-k1" });
    expect(report.trash?.records).toBe(1);
    expect(await stowage.tenant(alice).sessionBlobs.getBySessionId(sessionId)).toBeNull();
    const listed = (await stowage.listTrash(alice)).items.filter((item) => item.kind === "storedSession");
    expect(listed).toEqual([expect.objectContaining({ id: sessionId, by: "key-k1" })]);
    // Still ciphertext in the repository while in the trash.
    const { records } = await sessionBlobs.list();
    expect(records.length).toBe(1);
    for (const record of records) expect(Buffer.from(record.blob).includes(SECRET)).toBe(false);
    await open().restoreFromTrash(alice, "storedSession", sessionId);
    const after = await open().tenant(alice).sessionBlobs.getBySessionId(sessionId);
    expect(Buffer.from(after!.blob).equals(Buffer.from(before!.blob))).toBe(true);
  });

  it("a stored session is opened over the ciphertext each read fetched: changing what one read gave changes neither the record nor the next read", async () => {
    const { open, sessionBlobs } = deployment();
    const stowage = open();
    const sessionId = randomUUID();
    await writeEverywhere(stowage, sessionId);
    const sealedBefore = Buffer.from((await sessionBlobs.list()).records[0]!.blob);
    const tenant = stowage.tenant(alice).sessionBlobs;
    const reads = [() => tenant.getBySessionId(sessionId), () => tenant.getLatestForRequest("req-1")];
    const archive = Buffer.from((await reads[0]!())!.blob);
    expect(gunzipSync(archive).toString()).toContain(SECRET);
    for (const read of reads) (await read())!.blob.fill(0);
    for (const read of reads) expect(Buffer.from((await read())!.blob).equals(archive)).toBe(true);
    expect(Buffer.from((await sessionBlobs.list()).records[0]!.blob).equals(sealedBefore)).toBe(true);
  });

  it("sealStore seals another store (the uploads') under the principal's data key, readable by the deployment's other views", async () => {
    const { dir, open } = deployment();
    const raw = createFsObjectStore({ root: join(dir, "uploads") });
    const key = "sessions/user/alice/s1/uploads/env.json";
    // Sealed before the deployment is made (as the app's upload service is), read through it after.
    const early = createSharedStores({
      shared: createFsObjectStore({ root: join(dir, "shared") }),
      encryption: { env: { STOWAGE_ENCRYPTION_KEY: OLD } },
    }).sealStore(raw);
    await early.put(key, text(`{"token":"${SECRET}"}`));
    expect(early.capabilities).toMatchObject({ directUpload: false, directDownload: false });
    const stored = await readFile(join(dir, "uploads", key));
    expect(stored.includes(SECRET)).toBe(false);
    expect(new TextDecoder().decode((await open().sealStore(raw).get(key))!)).toContain(SECRET);
    expect((await open().sealStore(raw).head(key))?.size).toBe(`{"token":"${SECRET}"}`.length);
    // Under alice's data key, not the deployment's: her key record is the one written.
    const records = await readdir(join(dir, "shared", "encryption-keys"), { recursive: true });
    expect(records.some((path) => path.startsWith(join("user", "alice")))).toBe(true);
    // With another key-encryption key: refused, never garbage.
    await expectStowageError(
      open({ STOWAGE_ENCRYPTION_KEY: NEW }).sealStore(raw).get(key),
      "FORBIDDEN",
      "ENCRYPTION_KEY_UNKNOWN",
    );
    // Without encryption, the store itself.
    const clear = createSharedStores({ shared: createFsObjectStore({ root: join(dir, "shared") }) });
    expect(clear.sealStore(raw)).toBe(raw);
  });
});

describe("hostile encryption settings", () => {
  const key = randomBytes(32).toString("base64");
  const cases: [string, Env][] = [
    ["no key at all", {}],
    ["a blank key", { STOWAGE_ENCRYPTION_KEY: "   " }],
    ["16 bytes", { STOWAGE_ENCRYPTION_KEY: randomBytes(16).toString("base64") }],
    ["33 bytes", { STOWAGE_ENCRYPTION_KEY: randomBytes(33).toString("base64") }],
    ["hex, not base64", { STOWAGE_ENCRYPTION_KEY: randomBytes(32).toString("hex") }],
    ["an empty entry", { STOWAGE_ENCRYPTION_KEY: `${key},` }],
    ["a repeated id", { STOWAGE_ENCRYPTION_KEY: `a:${key},a:${randomBytes(32).toString("base64")}` }],
    ["the same key twice", { STOWAGE_ENCRYPTION_KEY: `${key},${key}` }],
    ["an id with a slash", { STOWAGE_ENCRYPTION_KEY: `a/b:${key}` }],
    ["an empty id", { STOWAGE_ENCRYPTION_KEY: `:${key}` }],
  ];
  for (const [what, env] of cases) {
    it(`${what} is INVALID_INPUT, and the message never repeats a key`, () => {
      const shared = createFsObjectStore({ root: join(base, randomUUID()) });
      let thrown: unknown;
      try {
        createSharedStores({ shared, encryption: { env } });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toMatchObject({ code: "INVALID_INPUT" });
      expect(String((thrown as Error).message)).not.toContain(key);
    });
  }
});
