import { randomUUID } from "node:crypto";
import { rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { PGlite } from "@electric-sql/pglite";
import { StowageError } from "@stowage/core";
import { expectStowageError, integrationEnv, recordingLogger } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { connectEmbedded } from "../src/connect-embedded.js";
import { connectPostgres } from "../src/connect-postgres.js";
import { rowsOf } from "../src/database.js";
import { createPostgresObjectStore } from "../src/object-store.js";
import { uniqueSchema } from "./backends.js";
import { copyEmbeddedDatabase, migratedDump } from "./support/copy-embedded-database.js";
import { pgliteOf } from "./support/pglite-of.js";

const base = await tempDirectory("stowage-connect-");

/** One tar entry, hand-made from the POSIX header layout: a regular file `name` holding `body`. */
function tarEntry(name: string, body: string): Uint8Array {
  // The header's name field holds 100 bytes: a longer name would be cut to another path.
  if (new TextEncoder().encode(name).length > 100) throw new Error(`tar entry name over 100 bytes: ${name}`);
  const content = new TextEncoder().encode(body);
  const header = new Uint8Array(512);
  const put = (offset: number, value: string) => header.set(new TextEncoder().encode(value), offset);
  put(0, name);
  put(100, "0000644\0");
  put(108, "0000000\0");
  put(116, "0000000\0");
  put(124, `${content.length.toString(8).padStart(11, "0")}\0`);
  put(136, "00000000000\0");
  put(156, "0");
  put(257, "ustar\u000000");
  put(148, "        ");
  put(
    148,
    `${header
      .reduce((sum, byte) => sum + byte, 0)
      .toString(8)
      .padStart(6, "0")}\0 `,
  );
  const padded = new Uint8Array(Math.ceil(content.length / 512) * 512);
  padded.set(content);
  const entry = new Uint8Array(512 + padded.length);
  entry.set(header);
  entry.set(padded, 512);
  return entry;
}
const text = (value: string) => new TextEncoder().encode(value);

describe("connect options", () => {
  it("rejects malformed urls, schemas and pool sizes before connecting", async () => {
    for (const url of ["", "mysql://x", "127.0.0.1:5432", undefined, 5]) {
      await expectStowageError(connectPostgres({ url: url as string }), "INVALID_INPUT");
    }
    for (const schema of [
      "",
      "Public",
      "a-b",
      'x"; DROP SCHEMA public CASCADE; --',
      "1abc",
      "a".repeat(64),
      "../x",
    ]) {
      await expectStowageError(connectPostgres({ url: "postgres://localhost/x", schema }), "INVALID_INPUT");
      await expectStowageError(connectEmbedded({ schema }), "INVALID_INPUT");
    }
    for (const maxConnections of [0, -1, 1.5]) {
      await expectStowageError(
        connectPostgres({ url: "postgres://localhost/x", maxConnections }),
        "INVALID_INPUT",
      );
    }
    for (const dataDir of ["", "a\u0000b", 7]) {
      await expectStowageError(connectEmbedded({ dataDir: dataDir as string }), "INVALID_INPUT");
    }
    for (const loadDataDir of ["/tmp/dump.tar", new Uint8Array(8), null, {}]) {
      await expectStowageError(connectEmbedded({ loadDataDir: loadDataDir as Blob }), "INVALID_INPUT");
    }
    // Into a data directory, a dump would be written over the database kept there.
    await expectStowageError(
      connectEmbedded({ dataDir: join(base, "not-made"), loadDataDir: new Blob([]) }),
      "INVALID_INPUT",
    );
  });

  it("fails with UNAVAILABLE when no server listens", async () => {
    await expectStowageError(connectPostgres({ url: "postgres://postgres@127.0.0.1:1/test" }), "UNAVAILABLE");
  });

  it("an aborted signal stops before connecting", async () => {
    const controller = new AbortController();
    controller.abort();
    await expectStowageError(connectEmbedded({ signal: controller.signal }), "ABORTED");
  });
});

describe("connectEmbedded", () => {
  it("keeps data in dataDir across close and reopen, in the schema asked for", async () => {
    const dataDir = join(base, "pgdata");
    const first = await connectEmbedded({ dataDir, schema: "stowage" });
    await createPostgresObjectStore({ db: first.db }).put("kept", text("across restarts"));
    await first.close();
    await first.close();
    const second = await connectEmbedded({ dataDir, schema: "stowage" });
    expect(new TextDecoder().decode((await createPostgresObjectStore({ db: second.db }).get("kept"))!)).toBe(
      "across restarts",
    );
    expect(rowsOf(await second.db.execute(sql`SELECT current_schema() AS s`))[0]?.s).toBe("stowage");
    await second.close();
  });

  it("tells its logger, and closes, when its data directory lock is removed by hand", async () => {
    const dataDir = join(base, "lost-lock");
    // The lock of an existing database is the subject, not a first start.
    await copyEmbeddedDatabase(dataDir);
    const { logger, warnings } = recordingLogger();
    const connection = await connectEmbedded({ dataDir, logger });
    await rm(join(dataDir, "stowage.lock"), { recursive: true, force: true });
    // proper-lockfile notices at its next refresh (every second): wait for it, boundedly.
    for (let i = 0; i < 100 && warnings.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(warnings.map((warning) => warning.details)).toEqual([{ reason: "DATA_DIR_LOCK_LOST" }]);
    await connection.close();
  });

  it("starts an in-memory database from a dump (loadDataDir): its rows kept, Stowage's tables added", async () => {
    // A dump made by PGlite itself, of a database that never saw Stowage.
    const plain = await PGlite.create();
    await plain.exec("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('from the dump');");
    const dump = await plain.dumpDataDir("none");
    await plain.close();
    const connection = await connectEmbedded({ loadDataDir: dump });
    expect(rowsOf(await connection.db.execute(sql`SELECT body FROM notes`))).toEqual([
      { body: "from the dump" },
    ]);
    const store = createPostgresObjectStore({ db: connection.db });
    await store.put("k", text("stored"));
    expect(new TextDecoder().decode((await store.get("k"))!)).toBe("stored");
    await connection.close();
  });

  it("a dump of a migrated database starts with its objects and applies no migration twice", async () => {
    const first = await connectEmbedded({ loadDataDir: await migratedDump() });
    await createPostgresObjectStore({ db: first.db }).put("kept", text("in the dump"));
    const migrations = sql`SELECT count(*)::int AS n FROM stowage_migrations`;
    const applied = rowsOf(await first.db.execute(migrations))[0]?.n;
    const dump = await pgliteOf(first).dumpDataDir("none");
    await first.close();
    const second = await connectEmbedded({ loadDataDir: dump });
    expect(new TextDecoder().decode((await createPostgresObjectStore({ db: second.db }).get("kept"))!)).toBe(
      "in the dump",
    );
    expect(rowsOf(await second.db.execute(migrations))[0]?.n).toBe(applied);
    await second.close();
  });

  it("refuses a dump that is not an uncompressed tar, before PGlite reads it", async () => {
    const gzip = gzipSync(Buffer.from("a tarball would be here"));
    const hostile = [
      new Blob([]),
      new Blob([new Uint8Array(4096).fill(0x41)]),
      new Blob(["not a tarball"]),
      new Blob([gzip]),
    ];
    for (const loadDataDir of hostile) {
      await expectStowageError(connectEmbedded({ loadDataDir }), "INVALID_INPUT");
    }
  });

  it("a tar that holds no database is an error, not a crash", async () => {
    const tar = new Blob([tarEntry("PG_VERSION", ""), new Uint8Array(1024)]);
    const err = await connectEmbedded({ loadDataDir: tar }).then(
      (connection) => connection.close().then(() => undefined),
      (error: unknown) => error,
    );
    expect(err).toBeInstanceOf(StowageError);
  });

  it("a dump whose entries climb out of the data directory writes nothing on the host", async () => {
    // An in-memory database is extracted into PGlite's in-memory file system: a `../` or absolute
    // name lands there, never on disk. A real dump follows the hostile entries.
    // In the temporary directory itself, not in `base`: a tar name holds 100 bytes, and the
    // climb plus a deep temporary directory (a tmpfs run's) went over.
    const escaped = join(tmpdir(), `stowage-esc-${randomUUID().slice(0, 8)}`);
    const dump = await migratedDump();
    const hostile = [`${"../".repeat(12)}${escaped.slice(1)}`, escaped].map((name) =>
      tarEntry(name, "planted"),
    );
    const connection = await connectEmbedded({ loadDataDir: new Blob([...hostile, dump]) }).catch(
      () => undefined,
    );
    await connection?.close();
    await expect(stat(escaped)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("creates a dataDir whose parents do not exist yet (a fresh project's ./.stowage/pg)", async () => {
    const connection = await connectEmbedded({ dataDir: join(base, "fresh", ".stowage", "pg") });
    expect(rowsOf(await connection.db.execute(sql`SELECT 1 AS one`))[0]?.one).toBe(1);
    await connection.close();
  });
});

const env = integrationEnv("PostgreSQL", ["DATABASE_URL"]);
describe.skipIf(!env.ready)(`connectPostgres${env.ready ? "" : ` (skipped: ${env.reason})`}`, () => {
  const url = env.values.DATABASE_URL!;

  it("migrates once even when several processes' pools connect at the same moment", async () => {
    const schema = uniqueSchema("race");
    const connections = await Promise.all(Array.from({ length: 4 }, () => connectPostgres({ url, schema })));
    try {
      const applied = rowsOf(
        await connections[0]!.db.execute(
          sql.raw(`SELECT count(*)::int AS n FROM "${schema}".stowage_migrations`),
        ),
      );
      // One row per migration in drizzle/meta/_journal.json (0000_initial … 0013_session_store_trash).
      expect(applied[0]?.n).toBe(14);
      const again = await connectPostgres({ url, schema });
      await again.close();
      const tables = rowsOf(
        await connections[0]!.db.execute(
          sql`SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} ORDER BY table_name`,
        ),
      ).map((row) => row.table_name);
      expect(tables).toEqual([
        "agent_sessions",
        "blobs",
        "langgraph_checkpoints",
        "langgraph_values",
        "langgraph_writes",
        "prompt_metrics",
        "quota_objects",
        "quota_reservations",
        "quota_scopes",
        "rate_limits",
        "session_store_entries",
        "session_store_keys",
        "session_store_trash",
        "session_store_trash_entries",
        "session_store_trash_keys",
        "stowage_migrations",
      ]);
    } finally {
      await connections[0]!.db.execute(sql.raw(`DROP SCHEMA "${schema}" CASCADE`));
      await Promise.all(connections.map((connection) => connection.close()));
    }
  });

  it("maps database errors: a missing table is INTERNAL with a hint, a unique violation ALREADY_EXISTS", async () => {
    const schema = uniqueSchema("errors");
    const connection = await connectPostgres({ url, schema });
    try {
      const store = createPostgresObjectStore({ db: connection.db });
      await connection.db.execute(sql.raw(`DROP TABLE "${schema}".blobs`));
      // The SQLSTATE is the reason; the message also says to apply the migrations.
      await expectStowageError(store.get("x"), "INTERNAL", "42P01");
    } finally {
      await connection.db.execute(sql.raw(`DROP SCHEMA "${schema}" CASCADE`));
      await connection.close();
    }
  });
});
