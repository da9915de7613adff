import { randomBytes } from "node:crypto";
import { integrationEnv } from "@stowage/core/testing";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe } from "vitest";
import { connectEmbedded } from "../src/connect-embedded.js";
import { connectPostgres } from "../src/connect-postgres.js";
import type { StowageConnection } from "../src/database.js";
import { migratedDump } from "./support/copy-embedded-database.js";

export interface BackendContext {
  /** The open connection (available inside tests and hooks, not at collection time). */
  connection(): StowageConnection;
  name: "PGlite" | "PostgreSQL";
  /** DATABASE_URL and the schema of this run, for tests that open more connections (PostgreSQL only). */
  url?: string;
  schema?: string;
}

/**
 * The run's migrated embedded database as a dump (support/embedded-database-template.ts), read
 * once per worker: a new PGlite runs initdb in WebAssembly (3–7 s of CPU, by the machine), loading
 * a dump costs a quarter of that.
 */
let dump: Promise<Blob> | undefined;

/** A new, migrated, empty in-memory database for one test file. */
async function freshEmbedded(): Promise<StowageConnection> {
  dump ??= migratedDump();
  return connectEmbedded({ loadDataDir: await dump });
}

/** A schema name unique to this run, so that parallel test files and CI runs never collide. */
export const uniqueSchema = (label: string) => `stowage_${label}_${randomBytes(5).toString("hex")}`;

/**
 * Declares `body` twice: on an embedded PGlite (always) and on the real PostgreSQL server of
 * DATABASE_URL (skipped with a printed reason outside CI when it is unset; a failure in CI). Each
 * gets a fresh database or schema for this file, dropped afterwards (PGlite's starts as the run's dump of an
 * empty migrated one: `freshEmbedded`).
 */
export function describeBackends(title: string, body: (backend: BackendContext) => void): void {
  describe(`${title} (PGlite)`, () => {
    let connection: StowageConnection | undefined;
    beforeAll(async () => {
      connection = await freshEmbedded();
    });
    afterAll(async () => {
      await connection?.close();
    });
    body({ name: "PGlite", connection: () => connection! });
  });

  const env = integrationEnv("PostgreSQL", ["DATABASE_URL"]);
  if (!env.ready) {
    describe.skip(`${title} (PostgreSQL, skipped: ${env.reason})`, () => {
      body({ name: "PostgreSQL", connection: () => undefined as never });
    });
    return;
  }
  const url = env.values.DATABASE_URL!;
  const schema = uniqueSchema(
    title
      .replace(/[^a-z]/gi, "")
      .toLowerCase()
      .slice(0, 20),
  );
  describe(`${title} (PostgreSQL)`, () => {
    let connection: StowageConnection | undefined;
    beforeAll(async () => {
      connection = await connectPostgres({ url, schema });
    });
    afterAll(async () => {
      if (!connection) return;
      await connection.db.execute(sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
      await connection.close();
    });
    body({ name: "PostgreSQL", connection: () => connection!, url, schema });
  });
}
