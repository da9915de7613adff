import { createHash, randomUUID } from "node:crypto";
import { join } from "node:path";
import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { expectStowageError } from "@stowage/core/testing";
import { describeSessionStoreConformance } from "@stowage/sessions/testing";
import {
  realTranscripts,
  realTranscriptsWithImages,
  screenshotPng,
  tempDirectory,
} from "@stowage/test-support";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { rowsOf } from "../../src/database.js";
import { createPostgresSessionStore } from "../../src/sessions/session-store.js";
import { describeBackends } from "../backends.js";
import { memoryContentStore } from "./memory-content-store.js";

// The SDK reads CLAUDE_CONFIG_DIR once per process; vitest runs this file in its own fork.
const claudeConfigDir = join(await tempDirectory("stowage-pg-session-store-payloads-"), ".claude");
process.env.CLAUDE_CONFIG_DIR = claudeConfigDir;

const png = screenshotPng(7, 320, 200);
const base64 = png.toString("base64");
const sha256 = createHash("sha256").update(png).digest("hex");
/** Claude Code's line for a `Read` of a PNG: the image twice (its result's block, `toolUseResult.file.base64`). */
const readOfPng = (uuid: string): SessionStoreEntry => ({
  type: "user",
  uuid,
  message: {
    role: "user",
    content: [
      {
        tool_use_id: "toolu_1",
        type: "tool_result",
        content: [{ type: "image", source: { type: "base64", data: base64, media_type: "image/png" } }],
      },
    ],
  },
  toolUseResult: { type: "image", file: { base64, type: "image/png", originalSize: png.byteLength } },
});

const real = realTranscripts("postgres SessionStore real transcripts with images");

describeBackends("postgres SessionStore with a blob store", (backend) => {
  const db = () => backend.connection().db;
  const truncate = () =>
    db().execute(
      sql`TRUNCATE session_store_entries, session_store_keys, session_store_trash, session_store_trash_keys, session_store_trash_entries`,
    );

  // Tests of this file run one after another; each conformance test starts from empty tables.
  describeSessionStoreConformance({
    name: `postgres SessionStore (${backend.name}), images in a blob store`,
    claudeConfigDir,
    createStore: async () => {
      await truncate();
      return createPostgresSessionStore({ db: db(), blobs: memoryContentStore() });
    },
  });

  async function rowsOfKey(sessionId: string): Promise<string[]> {
    return rowsOf(
      await db().execute(
        sql`SELECT entry FROM session_store_entries WHERE session_id = ${sessionId} ORDER BY id`,
      ),
    ).map((row) => row.entry as string);
  }

  it("keeps each image once in the blob store and only refs in the rows, [moved, entry] saying where", async () => {
    const blobs = memoryContentStore();
    const store = createPostgresSessionStore({ db: db(), blobs });
    const key = { projectKey: "-workspace-app", sessionId: randomUUID() };
    const prompt = { type: "user", uuid: "prompt", message: { content: "look" } };
    await store.append(key, [prompt, readOfPng("read")]);
    const [first, second] = await rowsOfKey(key.sessionId);
    expect(JSON.parse(first!)).toEqual(prompt);
    expect(second).not.toContain(base64.slice(0, 200));
    const [moved, entry] = JSON.parse(second!);
    expect(moved).toEqual([
      { path: ["message", "content", 0, "content", 0, "source", "data"], sha256, form: "" },
      { path: ["toolUseResult", "file", "base64"], sha256, form: "" },
    ]);
    expect(entry.toolUseResult.file.base64).toBe(`blob:sha256:${sha256}`);
    expect([...blobs.blobs.keys()]).toEqual([sha256]);
    expect(await store.load(key)).toEqual([prompt, readOfPng("read")]);
  });

  it("a blob missing when the transcript is loaded is INTEGRITY / MISSING_BLOB naming its ref", async () => {
    const blobs = memoryContentStore();
    const store = createPostgresSessionStore({ db: db(), blobs });
    const key = { projectKey: "-workspace-app", sessionId: randomUUID() };
    await store.append(key, [readOfPng("read")]);
    blobs.blobs.delete(sha256);
    const err = await expectStowageError(store.load(key), "INTEGRITY", "MISSING_BLOB");
    expect(err.details).toMatchObject({
      ref: `blob:sha256:${sha256}`,
      key: `-workspace-app/${key.sessionId}`,
    });
  });

  it("externalizePayloads: false keeps payloads in the rows; a store given no blob store refuses rows whose payloads moved", async () => {
    const blobs = memoryContentStore();
    const key = { projectKey: "-workspace-app", sessionId: randomUUID() };
    await createPostgresSessionStore({ db: db(), blobs, externalizePayloads: false }).append(key, [
      readOfPng("inline"),
    ]);
    expect((await rowsOfKey(key.sessionId))[0]).toContain(base64);
    expect(blobs.blobs.size).toBe(0);
    await createPostgresSessionStore({ db: db(), blobs }).append(key, [readOfPng("moved")]);
    expect(
      await createPostgresSessionStore({ db: db(), blobs, externalizePayloads: false }).load(key),
    ).toEqual([readOfPng("inline"), readOfPng("moved")]);
    await expectStowageError(
      createPostgresSessionStore({ db: db() }).load(key),
      "UNAVAILABLE",
      "NO_BLOB_STORE",
    );
  });

  it.each([
    ["an array of one", `[${JSON.stringify({ type: "user" })}]`],
    ["moved payloads that are empty", '[[],{"type":"user"}]'],
    ["a moved payload without its SHA-256", '[[{"path":["a"],"sha256":"x","form":""}],{"type":"user"}]'],
    [
      "a moved payload of no base64 form",
      `[[{"path":["a"],"sha256":"${"ab".repeat(32)}","form":"hex"}],{"type":"user"}]`,
    ],
    ["an entry that is not an object", `[[{"path":["a"],"sha256":"${"ab".repeat(32)}","form":""}],"user"]`],
  ])(
    "a row with moved payloads that is %s is INTEGRITY / CORRUPT_ROW with the key and the row",
    async (_what, text) => {
      const key = { projectKey: "proj-corrupt-moved", sessionId: randomUUID() };
      await db().execute(sql`
      INSERT INTO session_store_keys (project_key, session_id, subpath, mtime) VALUES (${key.projectKey}, ${key.sessionId}, '', 1)`);
      const [row] = rowsOf(
        await db().execute(sql`
        INSERT INTO session_store_entries (project_key, session_id, subpath, uuid, entry)
        VALUES (${key.projectKey}, ${key.sessionId}, '', NULL, ${text}) RETURNING id`),
      );
      const store = createPostgresSessionStore({ db: db(), blobs: memoryContentStore() });
      const err = await expectStowageError(store.load(key), "INTEGRITY", "CORRUPT_ROW");
      expect(err.details).toEqual({ key: `${key.projectKey}/${key.sessionId}`, row: Number(row!.id) });
    },
  );

  it.skipIf(!real.present)(
    "every real line comes back byte for byte, as written and with real images in it",
    async () => {
      const store = createPostgresSessionStore({ db: db(), blobs: memoryContentStore() });
      const roundTrip = async (records: SessionStoreEntry[]) => {
        const key = { projectKey: "real", sessionId: randomUUID() };
        // In batches of 50, as the SDK mirrors a transcript.
        for (let start = 0; start < records.length; start += 50)
          await store.append(key, records.slice(start, start + 50));
        return { loaded: await store.load(key), rows: await rowsOfKey(key.sessionId) };
      };
      for (const file of real.files()) {
        const records = real.records(file) as SessionStoreEntry[];
        // JSON.stringify of what was read from the file, computed before anything is stored.
        const expected = JSON.stringify(records);
        expect(JSON.stringify((await roundTrip(records)).loaded)).toBe(expected);
      }
      let images = 0;
      for (const { records } of realTranscriptsWithImages(real)) {
        const expected = JSON.stringify(records);
        images += (expected.match(/iVBORw0KGgo/g) ?? []).length;
        const { loaded, rows } = await roundTrip(records as SessionStoreEntry[]);
        expect(JSON.stringify(loaded)).toBe(expected);
        expect(rows.join("\n")).not.toContain("iVBORw0KGgo");
      }
      expect(images).toBeGreaterThan(20);
    },
  );

  it("refuses blobs that are not a ContentStore and externalizePayloads that is not a boolean or has no blobs", () => {
    for (const options of [
      { db: db(), blobs: {} },
      { db: db(), blobs: "blobs/" },
      { db: db(), blobs: memoryContentStore(), externalizePayloads: "yes" },
      { db: db(), externalizePayloads: true },
    ]) {
      expect(() => createPostgresSessionStore(options as never)).toThrow(
        expect.objectContaining({ code: "INVALID_INPUT" }),
      );
    }
  });
});
