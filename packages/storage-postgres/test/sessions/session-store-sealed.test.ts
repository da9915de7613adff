import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { StowageError } from "@stowage/core";
import { expectStowageError, seededRandom } from "@stowage/core/testing";
import type { SessionStoreSeal } from "@stowage/sessions";
import { describeSessionStoreConformance } from "@stowage/sessions/testing";
import { tempDirectory } from "@stowage/test-support";
import { sql } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { rowsOf } from "../../src/database.js";
import { createPostgresSessionStore } from "../../src/sessions/session-store.js";
import { scanSessionStoreForBlobRefs } from "../../src/sessions/session-store-blob-refs.js";
import { describeBackends } from "../backends.js";
import { storeEntries } from "../store-entries.js";
import { memoryContentStore } from "./memory-content-store.js";

// The SessionStore given a seal: what the database holds is ciphertext (raw SQL reads look for a
// known secret), bound to its transcript, and every read of a row that is not what this store
// would write fails with a code. The seal here is written for the test (AES-256-GCM over
// node:crypto, the transcript as additional data), not tenancy's: the store must work with any.

// The SDK reads CLAUDE_CONFIG_DIR once per process; vitest runs this file in its own fork.
const claudeConfigDir = join(await tempDirectory("stowage-pg-sealed-session-store-"), ".claude");
process.env.CLAUDE_CONFIG_DIR = claudeConfigDir;
const { foldSessionSummary } = await import("@anthropic-ai/claude-agent-sdk");

const SECRET = `known-secret-${randomUUID()}`;
const PROMPT_SECRET = `first prompt ${randomUUID()}`;
const TAG = "sealed:";

/** A test seal, counting its calls by what they were bound to (`entries/…` or `summary/…`). */
function testSeal(key: Buffer = randomBytes(32)) {
  const calls = { seal: [] as string[], open: [] as string[] };
  const seal: SessionStoreSeal = {
    async seal(boundTo, texts) {
      calls.seal.push(boundTo);
      return texts.map((text) => {
        const nonce = randomBytes(12);
        const cipher = createCipheriv("aes-256-gcm", key, nonce);
        cipher.setAAD(Buffer.from(boundTo));
        const body = Buffer.concat([
          nonce,
          cipher.update(typeof text === "string" ? Buffer.from(text, "utf8") : text),
          cipher.final(),
          cipher.getAuthTag(),
        ]);
        return TAG + body.toString("base64url");
      });
    },
    async open(boundTo, texts) {
      calls.open.push(boundTo);
      return texts.map((text) => {
        if (!text.startsWith(TAG))
          throw new StowageError("INTEGRITY", "not sealed", { reason: "NOT_SEALED" });
        const body = Buffer.from(text.slice(TAG.length), "base64url");
        try {
          const decipher = createDecipheriv("aes-256-gcm", key, body.subarray(0, 12));
          decipher.setAAD(Buffer.from(boundTo));
          decipher.setAuthTag(body.subarray(body.byteLength - 16));
          return Buffer.concat([decipher.update(body.subarray(12, body.byteLength - 16)), decipher.final()]);
        } catch (err) {
          throw new StowageError("INTEGRITY", `does not authenticate for ${boundTo}`, {
            reason: "DECRYPTION_FAILED",
            cause: err,
          });
        }
      });
    },
  };
  return { seal, calls };
}

/** An Anthropic image block whose payload is 800 seeded bytes (it moves to the blob store). */
function imageEntry(random: () => number, uuid: string): { entry: SessionStoreEntry; sha256: string } {
  const bytes = Buffer.from(Array.from({ length: 800 }, () => Math.floor(random() * 256)));
  return {
    sha256: createHash("sha256").update(bytes).digest("hex"),
    entry: {
      type: "user",
      uuid,
      message: {
        role: "user",
        content: [
          { type: "text", text: SECRET },
          {
            type: "image",
            source: { type: "base64", media_type: "image/png", data: bytes.toString("base64") },
          },
        ],
      },
    },
  };
}

const prompt = (uuid: string, content: string): SessionStoreEntry => ({
  type: "user",
  uuid,
  timestamp: "2026-01-01T00:00:00.000Z",
  message: { role: "user", content },
});

const TABLES = sql`session_store_entries, session_store_keys, session_store_trash, session_store_trash_keys, session_store_trash_entries`;

describeBackends("sealed postgres SessionStore", (backend) => {
  const db = () => backend.connection().db;
  const { seal } = testSeal();

  describeSessionStoreConformance({
    name: `sealed postgres SessionStore (${backend.name})`,
    claudeConfigDir,
    trash: true,
    createStore: async () => {
      await db().execute(sql`TRUNCATE ${TABLES}`);
      return createPostgresSessionStore({ db: db(), seal });
    },
  });

  /** Every text of every row, live and trashed, as the database holds it. */
  async function rawTexts(): Promise<string> {
    const rows = rowsOf(
      await db().execute(sql`
        SELECT entry AS text FROM session_store_entries
        UNION ALL SELECT summary FROM session_store_keys
        UNION ALL SELECT entry FROM session_store_trash_entries
        UNION ALL SELECT summary FROM session_store_trash_keys`),
    );
    return rows.map((row) => String(row.text)).join("\n");
  }

  const newKey = (projectKey = "proj-sealed") => ({ projectKey, sessionId: randomUUID() });

  describe("what the database holds", () => {
    beforeEach(async () => {
      await db().execute(sql`TRUNCATE ${TABLES}`);
    });

    it("no plaintext of a known secret in any entry or summary, live or trashed; loads and summaries read it back", async () => {
      const store = createPostgresSessionStore({ db: db(), seal });
      const key = newKey();
      const entries = [prompt("u1", PROMPT_SECRET), { type: "assistant", uuid: "a1", text: SECRET }];
      await store.append(key, entries);
      await store.append({ ...key, subpath: "subagents/agent-1" }, [
        { type: "user", uuid: "s1", text: SECRET },
      ]);
      expect(await store.load(key)).toEqual(entries);
      const [summary] = await store.listSessionSummaries(key.projectKey);
      // The summary holds the first prompt: the secret is there to be found, in clear it would be.
      expect(JSON.stringify(summary!.data)).toContain(PROMPT_SECRET);
      let raw = await rawTexts();
      expect(raw).not.toContain(SECRET);
      expect(raw).not.toContain(PROMPT_SECRET);
      expect(raw).not.toContain("assistant");
      // What stays in clear: the key, the uuids (the idempotency key) and mtimes.
      const [row] = rowsOf(
        await db().execute(sql`SELECT session_id, uuid FROM session_store_entries WHERE uuid = 'a1'`),
      );
      expect(row).toEqual({ session_id: key.sessionId, uuid: "a1" });

      await store.delete(key);
      const [trashed] = await store.listTrash(key.projectKey);
      // What the trash keeps taking is the ciphertext: at least the entries' JSON.
      expect(trashed!.bytes).toBeGreaterThan(JSON.stringify(entries).length);
      raw = await rawTexts();
      expect(raw).not.toContain(SECRET);
      expect(raw).not.toContain(PROMPT_SECRET);
      await store.restoreFromTrash(key.projectKey, trashed!.trashId);
      expect(await store.load(key)).toEqual(entries);
      expect(await store.load({ ...key, subpath: "subagents/agent-1" })).toEqual([
        { type: "user", uuid: "s1", text: SECRET },
      ]);
      expect((await store.listSessionSummaries(key.projectKey))[0]!.data).toEqual(summary!.data);
      // A store without a seal over the same rows would have shown the secret.
      const clear = createPostgresSessionStore({ db: db() });
      await clear.append(newKey("proj-clear"), [{ type: "assistant", uuid: "c", text: SECRET }]);
      expect(await rawTexts()).toContain(SECRET);
    });

    it("an append is a batch row, then a row an entry naming its place in it; a retried batch stores only its new entries", async () => {
      const key = newKey();
      const sub = { ...key, subpath: "subagents/agent-1" };
      const [p1, p2, p3, p4] = ["r1", "r2", "r3", "r4"].map((uuid) => prompt(uuid, `${uuid} ${SECRET}`));
      for (const target of [key, sub] as { projectKey: string; sessionId: string; subpath?: string }[]) {
        const store = createPostgresSessionStore({ db: db(), seal });
        await store.append(target, [p1!, p2!]);
        // Retried with one more entry, then retried whole (only a batch row is stored).
        await store.append(target, [p2!, p3!]);
        await store.append(target, [p3!]);
        // Another store knows no head: a main transcript's append goes through the transaction.
        await createPostgresSessionStore({ db: db(), seal }).append(target, [p1!, p4!]);
        expect(await store.load(target)).toEqual([p1, p2, p3, p4]);
        const rows = rowsOf(
          await db().execute(sql`
            SELECT uuid, entry FROM session_store_entries
            WHERE session_id = ${target.sessionId} AND subpath = ${target.subpath ?? ""} ORDER BY id`),
        );
        expect(rows.map((row) => row.uuid)).toEqual([null, "r1", "r2", null, "r3", null, null, "r4"]);
        const ids = [0, 3, 5, 6].map((at) => String(rows[at]!.entry).match(/^@([A-Za-z0-9_-]{12}):/)?.[1]);
        expect(new Set(ids).size).toBe(4);
        expect(rows.map((row) => row.entry).filter((_, at) => ![0, 3, 5, 6].includes(at))).toEqual([
          `#${ids[0]}.0`,
          `#${ids[0]}.1`,
          `#${ids[1]}.1`,
          `#${ids[3]}.1`,
        ]);
      }
    });

    it("a long append is cut into batches of at most 128 Ki characters of lines, an entry longer than that a batch of its own", async () => {
      const store = createPostgresSessionStore({ db: db(), seal });
      const key = newKey();
      // 3 entries of ~60,000 characters, one of 200,000, then 2 more of ~60,000: batches of 2, 1, 1
      // and 2. Two-byte text (two UTF-8 bytes a character) and characters beyond U+FFFF (four), so
      // that a batch's bytes are not its characters.
      const entries = [60_000, 60_000, 60_000, 200_000, 60_000, 60_000].map((length, at) =>
        prompt(`big-${at}`, at % 2 === 0 ? "é".repeat(length) : "😀".repeat(length / 2)),
      );
      await store.append(key, entries);
      expect(await store.load(key)).toEqual(entries);
      const rows = rowsOf(
        await db().execute(sql`
          SELECT uuid, entry FROM session_store_entries WHERE session_id = ${key.sessionId} ORDER BY id`),
      );
      expect(rows.map((row) => row.uuid)).toEqual([
        null,
        "big-0",
        "big-1",
        null,
        "big-2",
        null,
        "big-3",
        null,
        "big-4",
        "big-5",
      ]);
      expect(rows.filter((row) => row.uuid !== null).map((row) => String(row.entry).split(".")[1])).toEqual([
        "0",
        "1",
        "0",
        "0",
        "0",
        "1",
      ]);
    });

    // PGlite reads pages of 1,000 rows; node-postgres opens rows 200 at a time as they arrive.
    it("one seal a batch and one open a page: a 2,500-entry transcript loads whole (3 or 13 pages)", async () => {
      const counted = testSeal();
      const store = createPostgresSessionStore({ db: db(), seal: counted.seal });
      const key = newKey();
      const random = seededRandom(3);
      const clock = { ms: Date.UTC(2026, 0, 1) };
      const batches = Array.from({ length: 5 }, () => storeEntries(random, 500, clock));
      for (const batch of batches) await store.append(key, batch);
      expect(counted.calls.seal.filter((bound) => bound.startsWith("entries/"))).toHaveLength(5);
      // The first append reads the key row (none yet); later ones fold from what this store wrote.
      expect(counted.calls.open).toEqual([]);
      const loaded = await store.load(key);
      expect(loaded).toEqual(batches.flat());
      expect(counted.calls.open.length).toBeLessThanOrEqual(backend.name === "PostgreSQL" ? 13 : 4);
      const [summary] = await store.listSessionSummaries(key.projectKey);
      expect(summary!.data).toEqual(foldSessionSummary(undefined, key, loaded!).data);
    });

    it("another store's append in between: the next one folds from the stored (sealed) summary", async () => {
      const a = createPostgresSessionStore({ db: db(), seal });
      const b = createPostgresSessionStore({ db: db(), seal });
      const key = newKey();
      const all = [
        prompt("1", PROMPT_SECRET),
        prompt("2", "second"),
        { type: "custom-title", customTitle: "T" },
      ];
      await a.append(key, [all[0]!]);
      await b.append(key, [all[1]!]);
      await a.append(key, [all[2]!]);
      expect(await a.load(key)).toEqual(all);
      const [summary] = await b.listSessionSummaries(key.projectKey);
      expect(summary!.data).toEqual(foldSessionSummary(undefined, key, all).data);
    });

    it("images move to the blob store and their refs stay in clear: garbage collection's scan finds them", async () => {
      const random = seededRandom(9);
      const blobs = memoryContentStore();
      const store = createPostgresSessionStore({ db: db(), seal, blobs });
      const key = newKey();
      const images = [imageEntry(random, "i1"), imageEntry(random, "i2"), imageEntry(random, "i3")];
      // The same image twice in one entry is one ref.
      const twice = imageEntry(random, "i4");
      const content = (twice.entry.message as { content: unknown[] }).content;
      content.push(content[1]);
      const entries = [...images.map(({ entry }) => entry), twice.entry, prompt("p", "no image")];
      await store.append(key, entries);
      const hashes = new Set<string>();
      for await (const hash of scanSessionStoreForBlobRefs(db())) hashes.add(hash);
      expect(hashes).toEqual(new Set([...images, twice].map(({ sha256 }) => sha256)));
      const raw = await rawTexts();
      expect(raw).not.toContain(SECRET);
      const payload = (images[0]!.entry.message as { content: { source?: { data: string } }[] }).content[1]!;
      expect(raw).not.toContain(payload.source!.data.slice(0, 40));
      expect(await store.load(key)).toEqual(entries);
      // In the trash too: a restore loads them.
      await store.delete(key);
      hashes.clear();
      for await (const hash of scanSessionStoreForBlobRefs(db())) hashes.add(hash);
      expect(hashes.size).toBe(4);
      // A ref taken out of the clear text is caught (a collection would have deleted its blob).
      const [trashed] = await store.listTrash(key.projectKey);
      await store.restoreFromTrash(key.projectKey, trashed!.trashId);
      await db().execute(sql`
        UPDATE session_store_entries SET entry = split_part(entry, ' ', 1) WHERE uuid = 'i2'`);
      const err = await expectStowageError(store.load(key), "INTEGRITY", "CORRUPT_ROW");
      expect(err.details).toMatchObject({ key: `${key.projectKey}/${key.sessionId}` });
    });
  });

  describe("rows that are not what this store wrote for this transcript: a code, never garbage", () => {
    beforeEach(async () => {
      await db().execute(sql`TRUNCATE ${TABLES}`);
    });

    async function twoSessions() {
      const store = createPostgresSessionStore({ db: db(), seal });
      const a = newKey();
      const b = newKey();
      await store.append(a, [prompt("a1", "alpha"), prompt("a2", SECRET)]);
      await store.append(b, [prompt("b1", "beta")]);
      return { store, a, b };
    }

    it("a tampered entry: INTEGRITY on load", async () => {
      const { store, a } = await twoSessions();
      // The batch row: the entry rows hold only the batch id and their index.
      await db().execute(sql`
        UPDATE session_store_entries
        SET entry = overlay(entry PLACING (CASE WHEN substr(entry, 30, 1) = 'A' THEN 'B' ELSE 'A' END) FROM 30 FOR 1)
        WHERE session_id = ${a.sessionId} AND uuid IS NULL`);
      await expectStowageError(store.load(a), "INTEGRITY");
    });

    it("an entry moved to another session, or to a subagent's transcript: INTEGRITY on load", async () => {
      const { store, a, b } = await twoSessions();
      await db().execute(sql`UPDATE session_store_entries SET session_id = ${b.sessionId} WHERE uuid = 'a2'`);
      await expectStowageError(store.load(b), "INTEGRITY");
      expect(await store.load(a)).toEqual([prompt("a1", "alpha")]);
      await db().execute(sql`
        UPDATE session_store_entries SET session_id = ${a.sessionId}, subpath = 'subagents/x' WHERE uuid = 'a2'`);
      await expectStowageError(store.load({ ...a, subpath: "subagents/x" }), "INTEGRITY");
    });

    it("a summary moved to another session, or an entry's text put in a summary: INTEGRITY", async () => {
      const { store, a, b } = await twoSessions();
      await db().execute(sql`
        UPDATE session_store_keys SET summary = (SELECT summary FROM session_store_keys WHERE session_id = ${a.sessionId})
        WHERE session_id = ${b.sessionId}`);
      await expectStowageError(store.listSessionSummaries(a.projectKey), "INTEGRITY");
      // The append that reads it (a new store knows no head) refuses it too, and stores nothing.
      await expectStowageError(
        createPostgresSessionStore({ db: db(), seal }).append(b, [prompt("b2", "x")]),
        "INTEGRITY",
      );
      await db().execute(sql`
        UPDATE session_store_keys SET summary = (SELECT entry FROM session_store_entries WHERE uuid = 'b1')
        WHERE session_id = ${b.sessionId}`);
      await expectStowageError(store.listSessionSummaries(a.projectKey), "INTEGRITY");
      expect(await store.load(b)).toHaveLength(1);
    });

    it("sealed rows read by a store given no seal: FORBIDDEN (ROW_SEALED), saying so", async () => {
      const { a } = await twoSessions();
      const clear = createPostgresSessionStore({ db: db() });
      const err = await expectStowageError(clear.load(a), "FORBIDDEN", "ROW_SEALED");
      expect(err.message).toMatch(/sealed.*given no seal/);
      await expectStowageError(clear.listSessionSummaries(a.projectKey), "FORBIDDEN", "ROW_SEALED");
      await expectStowageError(clear.append(a, [prompt("a3", "x")]), "FORBIDDEN", "ROW_SEALED");
      expect(await createPostgresSessionStore({ db: db(), seal }).load(a)).toHaveLength(2);
    });

    it("clear rows read by a store with a seal: INTEGRITY (ROW_NOT_SEALED)", async () => {
      const clear = createPostgresSessionStore({ db: db() });
      const key = newKey();
      await clear.append(key, [prompt("c1", "clear")]);
      const sealed = createPostgresSessionStore({ db: db(), seal });
      await expectStowageError(sealed.load(key), "INTEGRITY", "ROW_NOT_SEALED");
      await expectStowageError(sealed.listSessionSummaries(key.projectKey), "INTEGRITY", "ROW_NOT_SEALED");
      await expectStowageError(sealed.append(key, [prompt("c2", "x")]), "INTEGRITY", "ROW_NOT_SEALED");
      expect(await clear.load(key)).toHaveLength(1);
    });

    it("rows sealed under another key: INTEGRITY", async () => {
      const { a } = await twoSessions();
      const other = createPostgresSessionStore({ db: db(), seal: testSeal().seal });
      await expectStowageError(other.load(a), "INTEGRITY");
      await expectStowageError(other.listSessionSummaries(a.projectKey), "INTEGRITY");
    });

    const boundEntries = (key: { projectKey: string; sessionId: string }) =>
      `entries/${key.projectKey}/${key.sessionId}/`;
    /** A batch row as the store writes it, sealing `plain` for `key`'s transcript under batch id `id`. */
    const batchRow = async (key: { projectKey: string; sessionId: string }, id: string, plain: string) =>
      `@${id}:${(await seal.seal(boundEntries(key), [plain]))[0]!}`;
    const ID = "AAAAAAAAAAAA";
    /** The batch id of the first batch row of `key`'s transcript. */
    const firstBatchId = async (key: { sessionId: string }) => {
      const [row] = rowsOf(
        await db().execute(sql`
          SELECT entry FROM session_store_entries WHERE session_id = ${key.sessionId} AND uuid IS NULL
          ORDER BY id LIMIT 1`),
      );
      return String(row!.entry).slice(1, 13);
    };
    // Rows written by hand after those of a transcript holding one batch of two entries (a1, a2),
    // and the code a sealed store's load gives.
    type Key = { projectKey: string; sessionId: string };
    const hostileRows: [string, (key: Key) => Promise<string[]>, string, string?][] = [
      ["empty", async () => [""], "INTEGRITY", "ROW_NOT_SEALED"],
      ["a clear entry", async () => ['{"type":"user","uuid":"h"}'], "INTEGRITY", "ROW_NOT_SEALED"],
      ["a clear number", async () => ["42"], "INTEGRITY", "ROW_NOT_SEALED"],
      ["JSON after whitespace", async () => [' {"type":"user"}'], "INTEGRITY", "ROW_NOT_SEALED"],
      ["neither a batch nor an entry row", async () => ["xyz:abc"], "INTEGRITY", "CORRUPT_ROW"],
      ["the test seal's text alone, no row mark", async () => [TAG], "INTEGRITY", "CORRUPT_ROW"],
      ["an entry row of no batch", async () => [`#${ID}.0`], "INTEGRITY", "CORRUPT_ROW"],
      [
        "an entry row reading its batch's entry again",
        async (key) => [`#${await firstBatchId(key)}.1`],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "an entry row past its batch's end",
        async (key) => [`#${await firstBatchId(key)}.2`],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "an entry row with a leading zero",
        async (key) => [`#${await firstBatchId(key)}.02`],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "an entry row with a negative index",
        async (key) => [`#${await firstBatchId(key)}.-1`],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "an entry row without an index",
        async (key) => [`#${await firstBatchId(key)}`],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "an entry row whose index overflows",
        async (key) => [`#${await firstBatchId(key)}.99999999999999999999`],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      ["a batch row, its mark alone", async () => ["@"], "INTEGRITY"],
      ["a batch row whose sealed text is not the seal's", async () => [`@${ID}:${TAG}!!!!`], "INTEGRITY"],
      [
        "a batch row whose sealed text names another batch id",
        async (key) => [await batchRow(key, ID, `BBBBBBBBBBBB\n{"type":"user"}`), `#${ID}.0`],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "a batch row whose id is not one",
        async (key) => [await batchRow(key, "x", `x\n{"type":"user"}`), "#x.0"],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "a batch row sealing its id alone",
        async (key) => [await batchRow(key, ID, ID), `#${ID}.0`],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "a batch row sealing what is not an entry",
        async (key) => [await batchRow(key, ID, `${ID}\n42`), `#${ID}.0`],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "a batch row sealing what is not JSON",
        async (key) => [await batchRow(key, ID, `${ID}\n{"type":`), `#${ID}.0`],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "an entry row with a ref its entry does not hold",
        async (key) => [
          await batchRow(key, ID, `${ID}\n{"type":"user"}`),
          `#${ID}.0 blob:sha256:${"a".repeat(64)}`,
        ],
        "INTEGRITY",
        "CORRUPT_ROW",
      ],
      [
        "a batch row sealed for the summary",
        async (key) => [
          `@${ID}:${(await seal.seal(`summary/${key.projectKey}/${key.sessionId}`, [`${ID}\n{"type":"user"}`]))[0]!}`,
          `#${ID}.0`,
        ],
        "INTEGRITY",
      ],
    ];
    it("a clear row past the first 1,000 of a sealed transcript: INTEGRITY (ROW_NOT_SEALED) naming it", async () => {
      const store = createPostgresSessionStore({ db: db(), seal });
      const key = newKey();
      await store.append(key, storeEntries(seededRandom(5), 1_500, { ms: Date.UTC(2026, 0, 1) }));
      const [row] = rowsOf(
        await db().execute(sql`
          INSERT INTO session_store_entries (project_key, session_id, subpath, uuid, entry)
          VALUES (${key.projectKey}, ${key.sessionId}, '', NULL, '{"type":"user"}') RETURNING id`),
      );
      const err = await expectStowageError(store.load(key), "INTEGRITY", "ROW_NOT_SEALED");
      expect(err.details).toEqual({ key: `${key.projectKey}/${key.sessionId}`, row: Number(row!.id) });
    });

    it.each(hostileRows)("rows written by hand: %s", async (_what, texts, code, reason) => {
      const { store, a } = await twoSessions();
      for (const text of await texts(a)) {
        await db().execute(sql`
          INSERT INTO session_store_entries (project_key, session_id, subpath, uuid, entry)
          VALUES (${a.projectKey}, ${a.sessionId}, '', NULL, ${text})`);
      }
      await expectStowageError(store.load(a), code as "INTEGRITY", reason);
    });
  });

  describe("the seal option", () => {
    it("is checked at construction", async () => {
      for (const bad of [{}, { seal: async () => [] }, "seal", null]) {
        await expectStowageError(
          () => createPostgresSessionStore({ db: db(), seal: bad as never }),
          "INVALID_INPUT",
        );
      }
    });

    it("a seal that answers what a reader could take for clear text or split: INTERNAL (SEAL_BROKEN), nothing stored", async () => {
      const key = newKey("proj-broken");
      for (const answer of [["has space"], ['{"json":1}'], [], ["a", "b"], [""]]) {
        const broken: SessionStoreSeal = { seal: async () => answer, open: seal.open };
        const store = createPostgresSessionStore({ db: db(), seal: broken });
        await expectStowageError(
          store.append({ ...key, subpath: "subagents/x" }, [prompt("x", "x")]),
          "INTERNAL",
          "SEAL_BROKEN",
        );
      }
      expect(
        await createPostgresSessionStore({ db: db(), seal }).load({ ...key, subpath: "subagents/x" }),
      ).toBeNull();
    });
  });
});
