import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createSessionFiles, type OpenedSession } from "@stowage/artifacts";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, errorResponse, StowageError } from "@stowage/core";
import { createContentRegistry, createHotStateStore } from "@stowage/hot-state";
import { createFsObjectStore } from "@stowage/storage-fs";
import { encodePng } from "@stowage/test-support";
import { createThreadFeeds, textItem } from "@stowage/thread-items";
import { createUploadService, handleUploadRequest, type UploadPolicy } from "@stowage/uploads";
import { createStowageMcpServer, errorFromMcp, type StowageMcpServerOptions } from "../src/index.js";

export const SESSION_ID = "0b6f4e0a-9f0c-4d35-8a1e-2f4f1c1b7a11";
export const ALICE = { kind: "user", id: "alice" } as const;
/** Alice's API key on the fixture's upload API. */
export const ALICE_KEY = "alice-test-key";
/** Where the fixture's upload API answers (in process, through `fetch`). */
export const UPLOAD_API = "http://stowage.test";

/** A real 2×2 PNG. */
export const PNG_BYTES = encodePng(2, 2, () => [200, 40, 40]);

/** Lines `line 1` … `line n`, newline-terminated. */
export const numberedLines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join("");

/**
 * One principal's session with everything the server exposes: two artifacts (one of 3,000 lines),
 * a markdown and a JSON agent output, a PNG blob, a thread with two items, a content ref, and
 * uploads on the fs store (signed URLs answered in process).
 */
export async function sessionFixture(
  base: string,
  overrides: Partial<StowageMcpServerOptions> = {},
  { uploadPolicy }: { uploadPolicy?: UploadPolicy } = {},
) {
  const root = join(base, `case-${Math.random().toString(36).slice(2)}`);
  const sessions = createSessionFiles({ dir: join(root, "sessions") });
  const session: OpenedSession = await sessions.create(SESSION_ID);
  await session.artifacts.saveArtifact("bash", "hello from bash\n");
  await session.artifacts.saveArtifact("bash", numberedLines(3000));
  await session.artifacts.writeAgentOutput("0-Explore", "# Notes\nthe needle is here\n");
  await session.artifacts.writeAgentOutput(
    "1-Report",
    JSON.stringify({ findings: [{ file: "a.ts", line: 3 }], "odd key": "value" }),
  );

  const shared = createMemoryObjectStore();
  const blobs = createBlobStore({ store: shared, prefix: "blobs/" });
  const png = await blobs.put(PNG_BYTES);
  const text = await blobs.put(new TextEncoder().encode("plain bytes"));

  const threads = createThreadFeeds({ store: shared, prefix: "threads" });
  const thread = { jobId: SESSION_ID, alias: "main" };
  await threads.post(thread, textItem("first item"), { author: "user:alice" });
  await threads.post(thread, textItem("second item mentions the needle"), { author: "user:alice" });

  const registry = createContentRegistry({ content: blobs, records: shared, prefix: "content-refs/" });
  const { record } = await registry.storeText("# Plan\n\nstep one\n", { type: "plan", summary: "the plan" });

  const hotStates = createHotStateStore({ store: shared });
  const dispatcher = hotStates.dispatcherFor(SESSION_ID);
  await dispatcher.load();
  await dispatcher.write({ session_id: SESSION_ID, objective: "Ship the MCP server" });

  const workspace = join(root, "workspace");
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, "shot.png"), PNG_BYTES);
  const uploadStore = createFsObjectStore({
    root: join(root, "uploads"),
    directUrls: { baseUrl: "http://stowage.test/direct", secret: "an-mcp-test-secret-of-32-bytes-or-more" },
  });
  const registered = new Set([`${ALICE.kind}:${ALICE.id}:${SESSION_ID}`]);
  const service = createUploadService({
    store: uploadStore,
    ...(uploadPolicy ? { policy: uploadPolicy } : {}),
    sessionExists: async (principal, sessionId) =>
      registered.has(`${principal.kind}:${principal.id}:${sessionId}`),
  });

  const options: StowageMcpServerOptions = {
    session,
    blobs,
    threads,
    registry,
    hotState: hotStates.reader,
    uploads: {
      root: workspace,
      apiBase: UPLOAD_API,
      apiKey: ALICE_KEY,
      ...(uploadPolicy ? { policy: uploadPolicy } : {}),
      // The upload API and the signed URLs, answered in process as the app answers them: its
      // middleware authenticates the key (401 otherwise), then the handler acts for the principal.
      fetch: async (input, init) => {
        const request = new Request(input, init);
        if (!new URL(request.url).pathname.startsWith("/agents/"))
          return uploadStore.handleDirectRequest!(request);
        if (request.headers.get("authorization") !== `Bearer ${ALICE_KEY}`) {
          return errorResponse(new StowageError("UNAUTHORIZED", "invalid or revoked API key"));
        }
        return handleUploadRequest(service, request, { principal: ALICE });
      },
    },
    pollIntervalMs: 20,
    ...overrides,
  };
  return {
    root,
    session,
    sessions,
    shared,
    blobs,
    png,
    text,
    threads,
    thread,
    registry,
    record,
    dispatcher,
    workspace,
    service,
    options,
  };
}

/** A connected SDK client and server, in process. */
export async function connectInMemory(options: StowageMcpServerOptions) {
  const mcp = createStowageMcpServer(options);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverTransport);
  const client = new Client({ name: "stowage-test", version: "1.0.0" });
  await client.connect(clientTransport);
  return { client, mcp, close: async () => client.close() };
}

/** The StowageError a request failed with (McpError) or a tool reported (isError result). */
export async function stowageErrorOf(action: Promise<unknown>): Promise<never> {
  let value: unknown;
  try {
    value = await action;
  } catch (err) {
    throw errorFromMcp(err) ?? err;
  }
  throw errorFromMcp(value) ?? new Error(`expected an error, got ${JSON.stringify(value).slice(0, 300)}`);
}

/** The text of a tool result's (or a resource read's) first content. */
export function textOf(result: object): string {
  const holder = result as { content?: { text: string }[]; contents?: { text: string }[] };
  return (holder.content ?? holder.contents)![0]!.text;
}

/** {@link sessionFixture} with a client connected in process; its close is pushed onto `closers`. */
export async function connectedFixture(
  base: string,
  closers: (() => Promise<void>)[],
  overrides: Partial<StowageMcpServerOptions> = {},
  fixtureOptions: { uploadPolicy?: UploadPolicy } = {},
) {
  const fixture = await sessionFixture(base, overrides, fixtureOptions);
  const connection = await connectInMemory(fixture.options);
  closers.push(connection.close);
  return { ...fixture, ...connection };
}
