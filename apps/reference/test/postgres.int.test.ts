import { randomUUID } from "node:crypto";
import { integrationEnv } from "@stowage/core/testing";
import { compressChunks, toTransport } from "@stowage/sessions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./support/test-app.js";

const postgres = integrationEnv("reference app on PostgreSQL", ["DATABASE_URL"]);

describe.skipIf(!postgres.ready)("session blobs through the app on PostgreSQL", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ DATABASE_URL: postgres.values.DATABASE_URL! });
  });
  afterAll(() => app.close());

  it("stores and returns the latest session of a request", async () => {
    expect(await (await app.call("/healthz")).json()).toMatchObject({ database: "pg" });
    const key = await app.keyFor({ kind: "user", id: "pg" });
    // A blob is read through when stored: a real transcript line, gzipped.
    const raw = new TextEncoder().encode(`${JSON.stringify({ type: "user", content: "archive bytes" })}\n`);
    const transport = toTransport({
      sessionId: randomUUID(),
      codec: "gzip",
      blob: await compressChunks("gzip", [raw]),
      rawSizeBytes: raw.byteLength,
    });
    const requestId = `pg-${randomUUID()}`;
    expect((await app.call(`/requests/${requestId}/session-blobs`, { key, json: transport })).status).toBe(
      201,
    );
    expect(
      await (await app.call(`/requests/${requestId}/session-blobs/latest`, { key })).json(),
    ).toMatchObject(transport);
    expect(
      await (
        await app.call(`/requests/${requestId}/session-blobs?trashDays=0`, { key, method: "DELETE" })
      ).json(),
    ).toEqual({ requestId, deleted: 1 });
  });
});
