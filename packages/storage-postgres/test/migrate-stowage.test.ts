import { randomBytes } from "node:crypto";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { integrationEnv } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { sql } from "drizzle-orm";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { rowsOf, STOWAGE_MIGRATIONS_FOLDER, type StowageDatabase } from "../src/database.js";
import { migrateStowage } from "../src/migrate-stowage.js";
import { createPostgresSessionBlobs } from "../src/sessions/session-blobs.js";

const scratch = await tempDirectory("stowage-host-migrations-");

/** Stowage's migrations, by journal time (drizzle/meta/_journal.json: 0000_initial … 0013_session_store_trash). */
const STOWAGE_MIGRATIONS = 14;

// A host application's own drizzle migrations. Their journal times straddle Stowage's (late
// 2026): drizzle applies only migrations newer than the last row of its table, so with one
// shared table, whichever set ran second had its older migrations skipped.
const HOST_MIGRATIONS = [
  {
    tag: "0000_host_items",
    when: 1_600_000_000_000,
    sql: `CREATE TABLE "host_items" ("id" serial PRIMARY KEY)`,
  },
  {
    tag: "0001_host_notes",
    when: 1_700_000_000_000,
    sql: `CREATE TABLE "host_notes" ("id" serial PRIMARY KEY, "body" text)`,
  },
  {
    tag: "0002_host_tags",
    when: 1_900_000_000_000,
    sql: `CREATE TABLE "host_tags" ("name" text PRIMARY KEY)`,
  },
];

/** A drizzle migrations folder holding the first `count` host migrations. */
async function hostFolder(count: number): Promise<string> {
  const folder = join(scratch, `host-${count}-${randomBytes(4).toString("hex")}`);
  await mkdir(join(folder, "meta"), { recursive: true });
  const entries = HOST_MIGRATIONS.slice(0, count);
  for (const entry of entries) await writeFile(join(folder, `${entry.tag}.sql`), entry.sql);
  await writeFile(
    join(folder, "meta", "_journal.json"),
    JSON.stringify({
      version: "7",
      dialect: "postgresql",
      entries: entries.map((entry, idx) => ({
        idx,
        version: "7",
        when: entry.when,
        tag: entry.tag,
        breakpoints: true,
      })),
    }),
  );
  return folder;
}

/** Stowage's first migration alone, as an earlier version of this package shipped it. */
async function firstStowageRelease(): Promise<string> {
  const folder = join(scratch, `stowage-0000-${randomBytes(4).toString("hex")}`);
  await mkdir(join(folder, "meta"), { recursive: true });
  await copyFile(join(STOWAGE_MIGRATIONS_FOLDER, "0000_initial.sql"), join(folder, "0000_initial.sql"));
  await writeFile(
    join(folder, "meta", "_journal.json"),
    JSON.stringify({
      version: "7",
      dialect: "postgresql",
      entries: [{ idx: 0, version: "7", when: 1_795_296_523_252, tag: "0000_initial", breakpoints: true }],
    }),
  );
  return folder;
}

interface Database {
  db: StowageDatabase;
  /**
   * drizzle's own `migrate()`, as a host calls it: default table `drizzle.__drizzle_migrations`,
   * or the one in `migrationsSchema`.
   */
  drizzleMigrate(folder: string, migrationsSchema?: string): Promise<void>;
}

const tables = async (db: StowageDatabase) =>
  rowsOf(
    await db.execute(
      sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
    ),
  ).map((row) => String(row.table_name));

const count = async (db: StowageDatabase, table: string) =>
  Number(rowsOf(await db.execute(sql.raw(`SELECT count(*)::int AS n FROM ${table}`)))[0]?.n);

/** Opens a fresh database; with `searchPath`, that schema exists and is every connection's search path. */
type Open = (searchPath?: string) => Promise<Database & { close(): Promise<void> }>;

function describeHostMigrations(name: string, open: Open) {
  describe(`Stowage's migrations beside a host's drizzle migrations (${name})`, () => {
    it("host first, Stowage, then a newer host release: both sets applied, nothing skipped", async () => {
      const { db, drizzleMigrate, close } = await open();
      try {
        await drizzleMigrate(await hostFolder(1));
        await migrateStowage({ db });
        await drizzleMigrate(await hostFolder(3));
        expect(await tables(db)).toEqual(
          expect.arrayContaining(["host_items", "host_notes", "host_tags", "agent_sessions", "quota_scopes"]),
        );
        expect(await count(db, "drizzle.__drizzle_migrations")).toBe(3);
        expect(await count(db, "public.stowage_migrations")).toBe(STOWAGE_MIGRATIONS);
      } finally {
        await close();
      }
    });

    it("Stowage first, then the host, then Stowage again: both sets applied once", async () => {
      const { db, drizzleMigrate, close } = await open();
      try {
        await migrateStowage({ db });
        await drizzleMigrate(await hostFolder(3));
        await migrateStowage({ db });
        expect(await tables(db)).toEqual(
          expect.arrayContaining(["host_items", "host_notes", "host_tags", "agent_sessions", "blobs"]),
        );
        expect(await count(db, "drizzle.__drizzle_migrations")).toBe(3);
        expect(await count(db, "public.stowage_migrations")).toBe(STOWAGE_MIGRATIONS);
      } finally {
        await close();
      }
    });

    it("adopts a database an earlier version migrated in drizzle's table: nothing re-run, the host's rows kept", async () => {
      const { db, drizzleMigrate, close } = await open();
      try {
        // The earlier layout: Stowage's first migration and the host's first in one table.
        await drizzleMigrate(await hostFolder(1));
        await drizzleMigrate(await firstStowageRelease());
        await db.execute(sql`
          INSERT INTO agent_sessions (request_id, session_id, agent_type, session_blob, blob_size_bytes, codec, raw_size_bytes)
          VALUES ('req-old', '0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10', 'claude-code', '\\x01', 1, 'gzip', 1)`);
        // Running 0000 again would fail: its tables exist.
        await migrateStowage({ db });
        expect(await count(db, "public.stowage_migrations")).toBe(STOWAGE_MIGRATIONS);
        expect(await count(db, "drizzle.__drizzle_migrations")).toBe(1);
        // The host's next release is no longer hidden behind Stowage's newer rows.
        await drizzleMigrate(await hostFolder(2));
        expect(await tables(db)).toEqual(expect.arrayContaining(["host_items", "host_notes"]));
        // The old row got the owner '' that no caller can name, and is kept.
        const old = rowsOf(
          await db.execute(sql`SELECT owner FROM agent_sessions WHERE request_id = 'req-old'`),
        );
        expect(old).toEqual([{ owner: "" }]);
        const repo = createPostgresSessionBlobs({ db });
        expect(await repo.getLatestForRequest("user:alice", "req-old")).toBeNull();
      } finally {
        await close();
      }
    });

    it("adopts an earlier version's records kept in a schema of Stowage's own", async () => {
      const { db, drizzleMigrate, close } = await open("stowage");
      try {
        // connectPostgres({ schema }) used to keep them in <schema>.__drizzle_migrations.
        await drizzleMigrate(await firstStowageRelease(), "stowage");
        await migrateStowage({ db, schema: "stowage" });
        expect(await count(db, "stowage.stowage_migrations")).toBe(STOWAGE_MIGRATIONS);
        expect(await count(db, "stowage.__drizzle_migrations")).toBe(0);
        expect(await count(db, "stowage.quota_scopes")).toBe(0);
      } finally {
        await close();
      }
    });
  });
}

describeHostMigrations("PGlite", async (searchPath) => {
  const client = new PGlite("memory://");
  if (searchPath) await client.exec(`CREATE SCHEMA "${searchPath}"; SET search_path TO "${searchPath}"`);
  const db = drizzlePglite({ client });
  return {
    db: db as unknown as StowageDatabase,
    drizzleMigrate: (folder, migrationsSchema) =>
      migratePglite(db, { migrationsFolder: folder, ...(migrationsSchema ? { migrationsSchema } : {}) }),
    close: () => client.close(),
  };
});

const env = integrationEnv("PostgreSQL", ["DATABASE_URL"]);
if (env.ready) {
  // A database of its own per test: the host's table is drizzle's default, as in production.
  const adminUrl = env.values.DATABASE_URL!;
  describeHostMigrations("PostgreSQL", async (searchPath) => {
    const name = `stowage_host_${randomBytes(5).toString("hex")}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const pool = new pg.Pool({
      connectionString: url.toString(),
      max: 2,
      ...(searchPath ? { options: `-c search_path=${searchPath}` } : {}),
    });
    if (searchPath) await pool.query(`CREATE SCHEMA "${searchPath}"`);
    const db = drizzlePg({ client: pool });
    return {
      db: db as unknown as StowageDatabase,
      drizzleMigrate: (folder, migrationsSchema) =>
        migratePg(db, { migrationsFolder: folder, ...(migrationsSchema ? { migrationsSchema } : {}) }),
      async close() {
        await pool.end();
        await admin.query(`DROP DATABASE "${name}"`);
        await admin.end();
      },
    };
  });
} else {
  describe.skip(`Stowage's migrations beside a host's (PostgreSQL, skipped: ${env.reason})`, () => {
    it("needs DATABASE_URL", () => {});
  });
}
