import { createHash, randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { expectStowageError } from "@stowage/core/testing";
import { encodePng } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stowage } from "./support/cli.js";
import { connectStowageMcp, seedMcpSession } from "./support/stowage-mcp.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

const alice = { kind: "user", id: "alice" } as const;
const PNG = encodePng(2, 2, () => [10, 200, 30]);

let app: TestApp;
let aliceKey: string;
let sessionId: string;
let workspace: string;
let env: Record<string, string>;
let seeded: Awaited<ReturnType<typeof seedMcpSession>>;

beforeAll(async () => {
  // The server runs (its embedded database, its upload API); `stowage mcp` runs beside it on the
  // same data directory, as an agent's MCP client starts it.
  app = await startTestApp();
  aliceKey = await app.keyFor(alice);
  sessionId = randomUUID();
  seeded = await seedMcpSession(app.server.services.tenant(alice), sessionId, PNG);
  workspace = join(app.dataDir, "workspace");
  await mkdir(workspace);
  await writeFile(join(workspace, "shot.png"), PNG);
  env = { STOWAGE_DATA_DIR: app.dataDir };
});
afterAll(() => app.close());

describe("stowage mcp", () => {
  it("serves every resource kind and every tool of the principal's session over stdio", async () => {
    const client = await connectStowageMcp(
      [
        "--session",
        sessionId,
        "--user",
        "alice",
        "--upload-root",
        workspace,
        "--api",
        app.url,
        "--key",
        aliceKey,
      ],
      { cwd: app.dataDir, env },
    );
    try {
      expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
        "artifact://0",
        "agent://0-Report",
        "thread://main",
        `content-ref://${seeded.contentRef}`,
        "hot-state://latest",
      ]);
      expect((await client.readResource({ uri: "artifact://0" })).contents[0]).toMatchObject({
        text: "npm test\n42 passing\n",
      });
      expect(
        (await client.readResource({ uri: "agent://0-Report/findings/0/file" })).contents[0],
      ).toMatchObject({
        text: "src/app.ts",
      });
      expect((await client.readResource({ uri: seeded.blobRef })).contents[0]).toMatchObject({
        mimeType: "image/png",
        blob: PNG.toString("base64"),
      });
      const thread = JSON.parse(
        ((await client.readResource({ uri: "thread://main" })).contents[0] as { text: string }).text,
      );
      expect(thread.items[0].content[0].text).toBe("run started");
      expect(
        (await client.readResource({ uri: `content-ref://${seeded.contentRef}` })).contents[0],
      ).toMatchObject({
        text: "# Plan\nship it\n",
      });
      const hot = JSON.parse(
        ((await client.readResource({ uri: "hot-state://latest" })).contents[0] as { text: string }).text,
      );
      expect(hot).toMatchObject({ version: 1, state: { objective: "make the tests pass" } });

      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual([
        "read_artifact",
        "query_agent_output",
        "search_session",
        "artifacts_get",
        "upload_artifact",
      ]);
      const call = (name: string, args: Record<string, unknown>) =>
        client.callTool({ name, arguments: args });
      expect((await call("read_artifact", { id: 0, offset: 2 })).structuredContent).toMatchObject({
        text: "42 passing\n",
      });
      expect((await call("query_agent_output", { id: "0-Report", q: ".findings[0].line" })).content).toEqual([
        { type: "text", text: "7" },
      ]);
      expect((await call("search_session", { text: "PASSING" })).structuredContent).toMatchObject({
        matches: [{ uri: "artifact://0", line: 2 }],
      });
      expect(
        (await call("artifacts_get", { artifact_id: seeded.contentRef })).structuredContent,
      ).toMatchObject({
        content: "# Plan\nship it\n",
      });
      const upload = await call("upload_artifact", { filePath: "shot.png" });
      expect(upload.isError, JSON.stringify(upload.content)).toBeFalsy();
      expect(upload.structuredContent).toMatchObject({
        filename: "shot.png",
        size: PNG.byteLength,
        sha256: createHash("sha256").update(PNG).digest("hex"),
      });
      // The server's own API lists it: the upload went through it, with its policy and quota.
      const listed = await app.call(`/agents/${sessionId}/artifacts`, { key: aliceKey });
      expect(((await listed.json()) as { artifacts: { filename: string }[] }).artifacts).toEqual([
        expect.objectContaining({ filename: "shot.png", size: PNG.byteLength }),
      ]);
      const outside = await call("upload_artifact", { filePath: "../pglite/PG_VERSION" });
      expect(outside.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("tells a subscriber of the threads the server posts to, and of artifacts written meanwhile", async () => {
    const client: Client = await connectStowageMcp(["--session", sessionId, "--user", "alice"], {
      cwd: app.dataDir,
      env,
    });
    try {
      const updated: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updated.push(n.params.uri);
      });
      await client.subscribeResource({ uri: "thread://main" });
      await client.subscribeResource({ uri: "artifact://1" });
      // Posted through the server's HTTP API: another process, whose notifier `stowage mcp` never hears.
      const posted = await app.call(`/threads/${sessionId}/main/items`, {
        key: aliceKey,
        json: textItem("posted over the API"),
      });
      expect(posted.status).toBe(201);
      await expect.poll(() => updated, { timeout: 30_000 }).toEqual(["thread://main"]);
      await seeded.session.artifacts.saveArtifact("bash", "later\n");
      await expect.poll(() => updated, { timeout: 30_000 }).toEqual(["thread://main", "artifact://1"]);
    } finally {
      await client.close();
    }
  });

  it("offers no upload_artifact without --upload-root, and refuses a key of another principal", async () => {
    const client = await connectStowageMcp(["--session", sessionId, "--user", "alice"], {
      cwd: app.dataDir,
      env,
    });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("upload_artifact");
    } finally {
      await client.close();
    }
    const bobKey = await app.keyFor({ kind: "user", id: "bob" });
    await expectStowageError(
      stowage(
        ["mcp", "--session", sessionId, "--user", "alice", "--upload-root", workspace, "--key", bobKey],
        {
          cwd: app.dataDir,
          env,
        },
      ),
      "FORBIDDEN",
      "KEY_OF_ANOTHER_PRINCIPAL",
    );
    await expectStowageError(
      stowage(["mcp", "--session", sessionId, "--user", "alice", "--upload-root", workspace], {
        cwd: app.dataDir,
        env,
      }),
      "UNAUTHORIZED",
    );
  });

  it("serves a session registered with `stowage session register` before anything is stored in it", async () => {
    const fresh = randomUUID();
    await stowage(["session", "register", fresh, "--user", "alice"], { cwd: app.dataDir, env });
    // Registered as another host would (no session file here): served too, its file made now.
    const elsewhere = randomUUID();
    await app.server.services.tenant(alice).registeredSessions.register(elsewhere);
    for (const id of [fresh, elsewhere]) {
      const client = await connectStowageMcp(["--session", id, "--user", "alice"], { cwd: app.dataDir, env });
      try {
        // No artifact, agent output, thread or hot state yet (content refs are the principal's).
        const uris = (await client.listResources()).resources.map((r) => r.uri);
        expect(uris.filter((uri) => !uri.startsWith("content-ref://"))).toEqual([]);
        expect((await client.listTools()).tools.map((t) => t.name)).toContain("read_artifact");
      } finally {
        await client.close();
      }
    }
    // Not registered, no file: nothing is made for it.
    await expectStowageError(
      stowage(["mcp", "--session", randomUUID(), "--user", "alice"], { cwd: app.dataDir, env }),
      "NOT_FOUND",
      "SESSION_NOT_FOUND",
    );
    // Bob's registration of the same id is bob's: alice still gets nothing of his.
    const bobs = randomUUID();
    await stowage(["session", "register", bobs, "--user", "bob"], { cwd: app.dataDir, env });
    await expectStowageError(
      stowage(["mcp", "--session", bobs, "--user", "alice"], { cwd: app.dataDir, env }),
      "NOT_FOUND",
    );
  });

  it("answers NOT_FOUND for another principal's session, and needs --session", async () => {
    await expectStowageError(
      stowage(["mcp", "--session", sessionId, "--user", "bob"], { cwd: app.dataDir, env }),
      "NOT_FOUND",
    );
    await expect(stowage(["mcp", "--user", "alice"], { cwd: app.dataDir, env })).rejects.toMatchObject({
      code: "commander.missingMandatoryOptionValue",
    });
  });
});
