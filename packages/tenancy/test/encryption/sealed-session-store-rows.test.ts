import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import { createMemoryNotifier, type Env } from "@stowage/core";
import { expectStowageError, integrationEnv } from "@stowage/core/testing";
import type { SessionStoreEntry, SessionStoreSeal } from "@stowage/sessions";
import { createFsObjectStore } from "@stowage/storage-fs";
import { connectEmbedded, connectPostgres, type StowageConnection } from "@stowage/storage-postgres";
import { createPostgresSessionStore } from "@stowage/storage-postgres/sessions";
import { tempDirectory } from "@stowage/test-support";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createStowage } from "../../src/index.js";
import { createSharedStores } from "../../src/shared/index.js";

// `sessionStoreSeal(principal)` given to the PostgreSQL SessionStore (on PGlite): the rows hold
// ciphertext under the principal's data key, which every process of the deployment reads, and
// which another key, another principal or a tampered row does not.
const base = await tempDirectory("stowage-sealed-session-store-rows-");
const alice = { kind: "user", id: "alice" } as const;
const bob = { kind: "user", id: "bob" } as const;
const OLD = randomBytes(32).toString("base64");
const NEW = randomBytes(32).toString("base64");
const SECRET = `known-secret-${randomUUID()}`;
const PROMPT = `a first prompt ${randomUUID()}`;

const entries: SessionStoreEntry[] = [
  {
    type: "user",
    uuid: "u1",
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { role: "user", content: PROMPT },
  },
  {
    type: "assistant",
    uuid: "a1",
    message: { role: "assistant", content: [{ type: "text", text: SECRET }] },
  },
];

const server = integrationEnv("sealed SessionStore rows on a PostgreSQL server", ["DATABASE_URL"]);

let connection: StowageConnection;
beforeAll(async () => {
  connection = await connectEmbedded();
});
afterAll(async () => {
  await connection?.close();
});

/** A deployment's shared store; each `open` is another process of it, with its own key caches. */
function deployment() {
  const root = join(base, randomUUID());
  const open = (env: Env = { STOWAGE_ENCRYPTION_KEY: OLD }) =>
    createSharedStores({ shared: createFsObjectStore({ root }), encryption: { env } });
  return { root, open };
}

/** What `open` gives back (UTF-8 bytes), as text. */
const textsOf = (opened: Uint8Array[]) => opened.map((bytes) => Buffer.from(bytes).toString("utf8"));

const storeOf = (seal: SessionStoreSeal | undefined) =>
  createPostgresSessionStore({ db: connection.db, ...(seal ? { seal } : {}) });

async function rawRows(sessionId: string): Promise<string[]> {
  const texts: string[] = [];
  for (const query of [
    `SELECT entry AS text FROM session_store_entries WHERE session_id = '${sessionId}' ORDER BY id`,
    `SELECT summary AS text FROM session_store_keys WHERE session_id = '${sessionId}'`,
  ]) {
    const result = (await connection.db.execute(query)) as unknown as { rows: { text: string }[] };
    texts.push(...result.rows.map((row) => row.text));
  }
  return texts;
}

describe("sessionStoreSeal(principal) with the PostgreSQL SessionStore", () => {
  let key: { projectKey: string; sessionId: string };
  beforeEach(() => {
    key = { projectKey: "-workspace-app", sessionId: randomUUID() };
  });

  it("round trips; the rows hold no plaintext; another process of the deployment reads them", async () => {
    const { open } = deployment();
    const store = storeOf(open().sessionStoreSeal(alice));
    await store.append(key, entries);
    expect(await store.load(key)).toEqual(entries);
    // The batch row, a row for each entry naming its place in the batch, and the summary.
    const [batch, ...raw] = await rawRows(key.sessionId);
    const id = batch!.slice(1, 13);
    expect(raw.slice(0, 2)).toEqual([`#${id}.0`, `#${id}.1`]);
    raw[0] = batch!.slice(14);
    raw.splice(1, 1);
    for (const text of raw) {
      expect(text).toMatch(/^stwe4:[A-Za-z0-9+/=]+$/);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(PROMPT);
      expect(Buffer.from(text.slice(6), "base64").includes(Buffer.from(SECRET))).toBe(false);
    }
    const other = storeOf(open().sessionStoreSeal(alice));
    expect(await other.load(key)).toEqual(entries);
    const [summary] = await other.listSessionSummaries(key.projectKey);
    expect(JSON.stringify(summary!.data)).toContain(PROMPT);
    // And appends on top of what the first wrote (its summary opened, folded, sealed again).
    await other.append(key, [{ type: "custom-title", customTitle: "T" }]);
    expect(await store.load(key)).toHaveLength(3);
    expect(
      (await store.listSessionSummaries(key.projectKey)).find((s) => s.sessionId === key.sessionId)!.data,
    ).toMatchObject({ customTitle: "T" });
  });

  it("is undefined without encryption, on the shared stores and on createStowage's deployment", async () => {
    const { root, open } = deployment();
    expect(
      createSharedStores({ shared: createFsObjectStore({ root }) }).sessionStoreSeal(alice),
    ).toBeUndefined();
    const agentSessionsDir = await tempDirectory("stowage-sealed-rows-agents-");
    const stowage = (encryption?: { env: Env }) =>
      createStowage({
        shared: createFsObjectStore({ root }),
        notifier: createMemoryNotifier(),
        agentSessionsDir,
        stores: {},
        ...(encryption ? { encryption } : {}),
      });
    expect(stowage().sessionStoreSeal(alice)).toBeUndefined();
    // The deployment's seal and the shared stores' are one: each reads what the other sealed.
    await storeOf(stowage({ env: { STOWAGE_ENCRYPTION_KEY: OLD } }).sessionStoreSeal(alice)).append(
      key,
      entries,
    );
    expect(await storeOf(open().sessionStoreSeal(alice)).load(key)).toEqual(entries);
  });

  it("another key-encryption key: FORBIDDEN; a deployment without the data key: FORBIDDEN (DATA_KEY_MISSING)", async () => {
    const { open } = deployment();
    await storeOf(open().sessionStoreSeal(alice)).append(key, entries);
    const wrongKek = storeOf(open({ STOWAGE_ENCRYPTION_KEY: NEW }).sessionStoreSeal(alice));
    await expectStowageError(wrongKek.load(key), "FORBIDDEN", "ENCRYPTION_KEY_UNKNOWN");
    await expectStowageError(wrongKek.listSessionSummaries(key.projectKey), "FORBIDDEN");
    const elsewhere = storeOf(deployment().open().sessionStoreSeal(alice));
    await expectStowageError(elsewhere.load(key), "FORBIDDEN", "DATA_KEY_MISSING");
  });

  it("rotation re-wraps key records only: the rows are unchanged and read with the new key alone", async () => {
    const { open } = deployment();
    await storeOf(open().sessionStoreSeal(alice)).append(key, entries);
    const before = await rawRows(key.sessionId);
    const report = await open({ STOWAGE_ENCRYPTION_KEY: `${NEW},${OLD}` }).rotateEncryptionKeys();
    expect(report.rewrapped).toBeGreaterThanOrEqual(1);
    expect(await rawRows(key.sessionId)).toEqual(before);
    expect(await storeOf(open({ STOWAGE_ENCRYPTION_KEY: NEW }).sessionStoreSeal(alice)).load(key)).toEqual(
      entries,
    );
    await expectStowageError(
      storeOf(open({ STOWAGE_ENCRYPTION_KEY: OLD }).sessionStoreSeal(alice)).load(key),
      "FORBIDDEN",
    );
  });

  it("alice's rows are not opened with bob's seal, nor moved into bob's transcript", async () => {
    const { open } = deployment();
    const shared = open();
    await storeOf(shared.sessionStoreSeal(alice)).append(key, entries);
    const bobs = storeOf(shared.sessionStoreSeal(bob));
    await expectStowageError(bobs.load(key), "FORBIDDEN", "DATA_KEY_MISSING");
    // Once bob has a data key of his own, alice's rows still name hers.
    const bobKey = { projectKey: key.projectKey, sessionId: randomUUID() };
    await bobs.append(bobKey, [{ type: "user", uuid: "b1" }]);
    await expectStowageError(bobs.load(key), "FORBIDDEN", "DATA_KEY_MISSING");
    // Alice's batch with its entries, moved after bob's: its data key is not bob's.
    await connection.db.execute(
      `UPDATE session_store_entries SET session_id = '${bobKey.sessionId}' WHERE session_id = '${key.sessionId}'`,
    );
    await expectStowageError(bobs.load(bobKey), "FORBIDDEN", "DATA_KEY_MISSING");
  });

  it("a tampered batch, or one moved to another of alice's sessions: INTEGRITY", async () => {
    const { open } = deployment();
    const store = storeOf(open().sessionStoreSeal(alice));
    const other = { projectKey: key.projectKey, sessionId: randomUUID() };
    await store.append(key, entries);
    await store.append(other, [{ type: "user", uuid: "o1" }]);
    // The batch with its entries, moved to the other session: sealed for another transcript.
    const moved = (
      (await connection.db.execute(
        `SELECT id FROM session_store_entries WHERE session_id = '${key.sessionId}'`,
      )) as unknown as { rows: { id: string }[] }
    ).rows.map((row) => row.id);
    await connection.db.execute(
      `UPDATE session_store_entries SET session_id = '${other.sessionId}' WHERE session_id = '${key.sessionId}'`,
    );
    await expectStowageError(store.load(other), "INTEGRITY", "DECRYPTION_FAILED");
    // Back, with a character of the batch row's ciphertext changed.
    await connection.db.execute(
      `UPDATE session_store_entries SET session_id = '${key.sessionId}' WHERE id IN (${moved.join(", ")})`,
    );
    expect(await store.load(other)).toEqual([{ type: "user", uuid: "o1" }]);
    await connection.db.execute(
      `UPDATE session_store_entries SET entry = overlay(entry PLACING (CASE WHEN substr(entry, 80, 1) = 'A' THEN 'B' ELSE 'A' END) FROM 80 FOR 1) WHERE session_id = '${key.sessionId}' AND uuid IS NULL`,
    );
    await expectStowageError(store.load(key), "INTEGRITY", "DECRYPTION_FAILED");
  });

  it("one open of rows from several batches, interleaved, of growing and shrinking sizes: each row its own text", async () => {
    // The open decodes every row into one buffer and keeps the last batch's key: a row of another
    // batch between two of one, or a long row before a short one, must not leak into the next.
    const seal = deployment().open().sessionStoreSeal(alice)!;
    const first = ["a", "b".repeat(90_000), "c", ""];
    const second = ["ü".repeat(50_000), "d", "e".repeat(3_000), "f"];
    const [a, b] = [await seal.seal("entries/p/s/", first), await seal.seal("entries/p/s/", second)];
    const rows = [a[0]!, b[0]!, a[1]!, b[1]!, a[2]!, b[2]!, a[3]!, b[3]!];
    const texts = [first[0], second[0], first[1], second[1], first[2], second[2], first[3], second[3]];
    expect(textsOf(await seal.open("entries/p/s/", rows))).toEqual(texts);
    // A bit of the second batch's salt flipped in one row: that row fails, not its neighbours'.
    const bytes = Buffer.from(b[1]!.slice(6), "base64");
    bytes[30] = bytes[30]! ^ 1;
    await expectStowageError(
      seal.open("entries/p/s/", [a[0]!, b[0]!, `stwe4:${bytes.toString("base64")}`]),
      "INTEGRITY",
    );
    expect(textsOf(await seal.open("entries/p/s/", [b[3]!, a[3]!, b[0]!]))).toEqual([
      second[3],
      first[3],
      second[0],
    ]);
  });

  it("the seal itself: any text round trips, bound to what it was sealed for, its row's place included", async () => {
    const seal = deployment().open().sessionStoreSeal(alice)!;
    const texts = ["", "ünïcødé ✓", "x".repeat(70_000), '{"type":"user"}'];
    const sealed = await seal.seal("entries/p/s/", texts);
    for (const text of sealed) expect(text).toMatch(/^stwe4:\S+$/);
    expect(textsOf(await seal.open("entries/p/s/", sealed))).toEqual(texts);
    // Given as UTF-8 bytes (how the store hands over a batch), each opens to the same text.
    const asBytes = await seal.seal("entries/p/s/", [
      ...texts.map((text) => Buffer.from(text)),
      new Uint8Array(0),
    ]);
    expect(textsOf(await seal.open("entries/p/s/", asBytes))).toEqual([...texts, ""]);
    await expectStowageError(seal.open("entries/p/s/sub", sealed), "INTEGRITY");
    await expectStowageError(seal.open("entries/p/s/", ['{"type":"user"}']), "INTEGRITY");
    // The index is in the row, under the tag: rewriting it to another row's fails.
    const bytes = Buffer.from(sealed[1]!.slice(6), "base64");
    bytes.writeUInt32BE(0, 37);
    await expectStowageError(seal.open("entries/p/s/", [`stwe4:${bytes.toString("base64")}`]), "INTEGRITY");
    expect(() =>
      createSharedStores({
        shared: createFsObjectStore({ root: base }),
        encryption: { env: { STOWAGE_ENCRYPTION_KEY: OLD } },
      }).sessionStoreSeal({ kind: "user", id: "../x" } as never),
    ).toThrow();
  });
});

// On a server, node-postgres hands a load its rows as they arrive, opened 200 at a time: a batch
// row and its entries then fall on different pages, which PGlite (a result whole) never does.
describe.skipIf(!server.ready)("sessionStoreSeal(principal) on a PostgreSQL server", () => {
  const schema = `stowage_sealed_rows_${randomBytes(5).toString("hex")}`;
  let remote: StowageConnection;
  beforeAll(async () => {
    remote = await connectPostgres({ url: server.values.DATABASE_URL!, schema });
  });
  afterAll(async () => {
    await remote?.db.execute(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await remote?.close();
  });

  it("1,000 entries in 10 appends round trip across arrival pages; rows hold no plaintext; bob's seal and no seal are refused; a tampered late batch: INTEGRITY", async () => {
    const { open } = deployment();
    const sealedStore = (seal: SessionStoreSeal | undefined) =>
      createPostgresSessionStore({ db: remote.db, ...(seal ? { seal } : {}) });
    const store = sealedStore(open().sessionStoreSeal(alice));
    const key = { projectKey: "-workspace-app", sessionId: randomUUID() };
    // About 3 KB an entry: several batch rows an append, each followed by its entry rows.
    const many: SessionStoreEntry[] = Array.from({ length: 1000 }, (_, i) => ({
      type: "assistant",
      uuid: `e${i}`,
      message: { role: "assistant", content: [{ type: "text", text: `${SECRET} ${i} ${"ü".repeat(1500)}` }] },
    }));
    for (let at = 0; at < many.length; at += 100) await store.append(key, many.slice(at, at + 100));
    expect(await store.load(key)).toEqual(many);
    expect(await sealedStore(open().sessionStoreSeal(alice)).load(key)).toEqual(many);

    const result = (await remote.db.execute(
      `SELECT entry FROM "${schema}".session_store_entries WHERE session_id = '${key.sessionId}' ORDER BY id`,
    )) as unknown as { rows: { entry: string }[] };
    const batchRows = result.rows.filter((row) => row.entry.startsWith("@"));
    expect(result.rows).toHaveLength(many.length + batchRows.length);
    expect(batchRows.length).toBeGreaterThan(10);
    for (const { entry } of result.rows) {
      expect(entry).toMatch(/^(@[A-Za-z0-9_-]{12}:stwe4:[A-Za-z0-9+/=]+|#[A-Za-z0-9_-]{12}\.\d+)$/);
      expect(entry).not.toContain(SECRET);
    }
    await expectStowageError(
      sealedStore(open().sessionStoreSeal(bob)).load(key),
      "FORBIDDEN",
      "DATA_KEY_MISSING",
    );
    await expectStowageError(sealedStore(undefined).load(key), "FORBIDDEN", "ROW_SEALED");
    // A batch row past the first arrival page, one base64 character changed: its tag fails.
    const late = batchRows[Math.floor(batchRows.length / 2)]!.entry;
    const at = late.length - 30;
    const changed = `${late.slice(0, at)}${late[at] === "A" ? "B" : "A"}${late.slice(at + 1)}`;
    await remote.db.execute(
      `UPDATE "${schema}".session_store_entries SET entry = '${changed}' WHERE entry = '${late}'`,
    );
    await expectStowageError(store.load(key), "INTEGRITY", "DECRYPTION_FAILED");
  });
});
