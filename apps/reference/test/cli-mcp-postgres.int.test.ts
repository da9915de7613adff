import { randomUUID } from "node:crypto";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { integrationEnv } from "@stowage/core/testing";
import { encodePng } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStowageMcp, seedMcpSession } from "./support/stowage-mcp.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

const postgres = integrationEnv("`stowage mcp` on PostgreSQL", ["DATABASE_URL"]);
const alice = { kind: "user", id: "alice" } as const;

// With a database the server posts through PostgreSQL's LISTEN/NOTIFY: `stowage mcp`, another
// process, hears each post on it (no polling).
describe.skipIf(!postgres.ready)("stowage mcp beside a server on PostgreSQL", () => {
  let app: TestApp;
  const sessionId = randomUUID();
  beforeAll(async () => {
    app = await startTestApp({ DATABASE_URL: postgres.values.DATABASE_URL! });
    await seedMcpSession(
      app.server.services.tenant(alice),
      sessionId,
      encodePng(1, 1, () => [1, 2, 3]),
    );
  });
  afterAll(() => app?.close());

  it("notifies a thread subscription of each post the server makes", async () => {
    const client = await connectStowageMcp(["--session", sessionId, "--user", "alice"], {
      cwd: app.dataDir,
      env: { STOWAGE_DATA_DIR: app.dataDir, DATABASE_URL: postgres.values.DATABASE_URL! },
    });
    try {
      const updated: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updated.push(n.params.uri);
      });
      await client.subscribeResource({ uri: "thread://main" });
      const key = await app.keyFor(alice);
      for (const text of ["one", "two"]) {
        const posted = await app.call(`/threads/${sessionId}/main/items`, { key, json: textItem(text) });
        expect(posted.status).toBe(201);
      }
      // One notification per post: LISTEN/NOTIFY tells each, where polling would fold them.
      await expect.poll(() => updated, { timeout: 30_000 }).toEqual(["thread://main", "thread://main"]);
    } finally {
      await client.close();
    }
  });
});
