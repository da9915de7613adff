import { join } from "node:path";
import { StowageError } from "@stowage/core";
import { integrationEnv } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { uniqueSchema } from "../test/backends.js";
import { connectEmbedded } from "./connect-embedded.js";
import { connectPostgres } from "./connect-postgres.js";
import { rowsOf } from "./database.js";
import { createPostgresObjectStore } from "./object-store.js";

const base = await tempDirectory("stowage-connect-");
const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "success",
    (err: unknown) => (StowageError.is(err) ? err.code : String(err)),
  );
const text = (value: string) => new TextEncoder().encode(value);

describe("connect options", () => {
  it("rejects malformed urls, schemas and pool sizes before connecting", async () => {
    for (const url of ["", "mysql://x", "127.0.0.1:5432", undefined, 5]) {
      expect(await codeOf(connectPostgres({ url: url as string }))).toBe("INVALID_INPUT");
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
      expect(await codeOf(connectPostgres({ url: "postgres://localhost/x", schema }))).toBe("INVALID_INPUT");
      expect(await codeOf(connectEmbedded({ schema }))).toBe("INVALID_INPUT");
    }
    for (const maxConnections of [0, -1, 1.5]) {
      expect(await codeOf(connectPostgres({ url: "postgres://localhost/x", maxConnections }))).toBe(
        "INVALID_INPUT",
      );
    }
    for (const dataDir of ["", "a\u0000b", 7]) {
      expect(await codeOf(connectEmbedded({ dataDir: dataDir as string }))).toBe("INVALID_INPUT");
    }
  });

  it("fails with UNAVAILABLE when no server listens", async () => {
    expect(await codeOf(connectPostgres({ url: "postgres://postgres@127.0.0.1:1/test" }))).toBe(
      "UNAVAILABLE",
    );
  });

  it("an aborted signal stops before connecting", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await codeOf(connectEmbedded({ signal: controller.signal }))).toBe("ABORTED");
  });
});

describe("connectEmbedded", () => {
  it("keeps data in dataDir across close and reopen, in the schema asked for", async () => {
    const dataDir = join(base, "pgdata");
    const first = await connectEmbedded({ dataDir, schema: "stowage" });
    await createPostgresObjectStore(first.db).put("kept", text("across restarts"));
    await first.close();
    await first.close();
    const second = await connectEmbedded({ dataDir, schema: "stowage" });
    expect(new TextDecoder().decode((await createPostgresObjectStore(second.db).get("kept"))!)).toBe(
      "across restarts",
    );
    expect(rowsOf(await second.db.execute(sql`SELECT current_schema() AS s`))[0]?.s).toBe("stowage");
    await second.close();
  }, 120_000);
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
          sql.raw(`SELECT count(*)::int AS n FROM "${schema}".__drizzle_migrations`),
        ),
      );
      expect(applied[0]?.n).toBe(1);
      const again = await connectPostgres({ url, schema });
      await again.close();
      const tables = rowsOf(
        await connections[0]!.db.execute(
          sql`SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} ORDER BY table_name`,
        ),
      ).map((row) => row.table_name);
      expect(tables).toEqual([
        "__drizzle_migrations",
        "agent_sessions",
        "blobs",
        "session_store_entries",
        "session_store_keys",
      ]);
    } finally {
      await connections[0]!.db.execute(sql.raw(`DROP SCHEMA "${schema}" CASCADE`));
      await Promise.all(connections.map((connection) => connection.close()));
    }
  }, 120_000);

  it("maps database errors: a missing table is INTERNAL with a hint, a unique violation ALREADY_EXISTS", async () => {
    const schema = uniqueSchema("errors");
    const connection = await connectPostgres({ url, schema });
    try {
      const store = createPostgresObjectStore(connection.db);
      await connection.db.execute(sql.raw(`DROP TABLE "${schema}".blobs`));
      const err = await store.get("x").catch((e: unknown) => e);
      expect(StowageError.is(err, "INTERNAL")).toBe(true);
      expect((err as StowageError).reason).toBe("42P01");
      expect((err as StowageError).message).toMatch(/migrations/);
    } finally {
      await connection.db.execute(sql.raw(`DROP SCHEMA "${schema}" CASCADE`));
      await connection.close();
    }
  }, 60_000);
});
