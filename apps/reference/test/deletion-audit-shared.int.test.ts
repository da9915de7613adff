// The deletion audit on a shared store every replica reaches (PostgreSQL, Ceph RGW): two app
// processes deleting sessions of one principal at once keep every row, each written create-only.
import { randomUUID } from "node:crypto";
import { integrationEnv } from "@stowage/core/testing";
import { s3TestEnv } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./support/test-app.js";

const postgres = integrationEnv("deletion audit on PostgreSQL", ["DATABASE_URL"]);
const s3 = s3TestEnv("deletion audit on S3");

interface Row {
  kind: string;
  id: string;
  by: string;
}

describe.each([
  ["PostgreSQL", postgres.ready, () => ({ DATABASE_URL: postgres.values.DATABASE_URL! })],
  ["Ceph RGW (S3)", s3.ready, () => ({ ...s3.values })],
] as const)("the deletion audit on %s", (_name, ready, env) => {
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    if (!ready) return;
    one = await startTestApp({ ...env(), STOWAGE_RATE_LIMIT_PER_MINUTE: "100000" });
    two = await startTestApp({ ...env(), STOWAGE_RATE_LIMIT_PER_MINUTE: "100000" });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it.skipIf(!ready)("two processes deleting at once keep every row", async () => {
    // A principal of its own per run: the shared store outlives the test.
    const principal = { kind: "user", id: `audit-${randomUUID().slice(0, 8)}` } as const;
    const key = await one.keyFor(principal);
    const ids = Array.from({ length: 12 }, () => randomUUID());
    for (const sessionId of ids) {
      const registered = await one.call("/agents/sessions", { key, json: { sessionId } });
      expect(registered.status).toBe(201);
    }
    const statuses = await Promise.all(
      ids.map(
        async (sessionId, i) =>
          (await (i % 2 ? one : two).call(`/agents/sessions/${sessionId}`, { key, method: "DELETE" })).status,
      ),
    );
    expect(statuses).toEqual(ids.map(() => 200));
    const rows: Row[] = [];
    let cursor: string | undefined;
    do {
      const response = await two.call(
        `/audit?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        { key },
      );
      const page = (await response.json()) as { rows: Row[]; cursor?: string };
      rows.push(...page.rows);
      cursor = page.cursor;
    } while (cursor);
    const sessions = rows.filter((row) => row.kind === "session").map((row) => row.id);
    expect(sessions.sort()).toEqual([...ids].sort());
    for (const row of rows) expect(row.by).toBe(`key:${key.slice(4, 16)}`);
  });
});
