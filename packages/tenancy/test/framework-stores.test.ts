import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { collectGarbage } from "@stowage/blob-store";
import { createMemoryNotifier } from "@stowage/core";
import type { StowageCheckpointSaver } from "@stowage/sessions/langgraph";
import { createFsObjectStore } from "@stowage/storage-fs";
import { encodePng, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createStowage, DEFAULT_STORES } from "../src/index.js";

// The LangGraph and OpenAI Agents rows of the default table, on an fs deployment: owner-scoped,
// deleted with their session, read as roots by garbage collection.
const base = await tempDirectory("stowage-tenancy-frameworks-");
const alice = { kind: "user", id: "alice" } as const;
const bob = { kind: "user", id: "bob" } as const;

// The default table without the rows that need a database or an upload service.
const { uploads: _u, sessionBlobs: _s, promptMetrics: _p, ...stores } = DEFAULT_STORES;

/** A deployment on one data directory; `open()` again is another process of it. */
function deployment() {
  const dir = join(base, randomUUID());
  mkdirSync(join(dir, "agent-sessions"), { recursive: true });
  const open = () =>
    createStowage({
      shared: createFsObjectStore({ root: join(dir, "shared") }),
      notifier: createMemoryNotifier(),
      agentSessionsDir: join(dir, "agent-sessions"),
      stores,
      // The deletion itself, not the trash before it (test/trash.test.ts).
      trashDays: 0,
    });
  const stowage = open();
  const collect = () =>
    collectGarbage({ blobs: stowage.blobs, roots: stowage.blobRoots(), graceMs: 0, timestampSlackMs: 0 });
  return { stowage, open, collect };
}

// A real PNG of noise (it does not compress), as a chat model receives it in a LangChain message.
const png = encodePng(48, 48, (x, y) => [(x * 73 + y * 151) % 256, (x * y * 31) % 256, (x + y * 7) % 256]);
const picture = () =>
  new HumanMessage({
    content: [
      { type: "text", text: "what is in this picture?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${png.toString("base64")}` } },
    ],
  });
const bytes = new Uint8Array(4096).map((_, i) => (i * 37) % 251);
const config = (threadId: string) => ({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
const metadata = { source: "loop" as const, step: 0, parents: {} };

/** A checkpoint holding an image and binary, and a pending write holding binary, on `threadId`. */
async function checkpointWithImage(saver: StowageCheckpointSaver, threadId: string) {
  const checkpoint = {
    ...emptyCheckpoint(),
    channel_values: { messages: [picture()], file: bytes },
    channel_versions: { messages: 1, file: 1 },
  };
  const saved = await saver.put(config(threadId), checkpoint, metadata, checkpoint.channel_versions);
  await saver.putWrites(saved, [["file", bytes]], "task-1");
  return saved;
}

describe("LangGraph checkpoints in the table", () => {
  it("are the principal's: another principal's thread of the same id is not reachable", async () => {
    const { stowage } = deployment();
    const threadId = randomUUID();
    await checkpointWithImage(stowage.tenant(alice).langgraphCheckpoints, threadId);
    const bobs = stowage.tenant(bob).langgraphCheckpoints;
    expect(await bobs.getTuple(config(threadId))).toBeUndefined();
    const listed = [];
    for await (const tuple of bobs.list(config(threadId))) listed.push(tuple);
    expect(listed).toEqual([]);
    await bobs.deleteThread(threadId);
    expect(await stowage.tenant(alice).langgraphCheckpoints.getTuple(config(threadId))).toBeDefined();
  });

  it("garbage collection keeps every blob a later getTuple needs; deleting the session frees them", async () => {
    const { stowage, open, collect } = deployment();
    const sessionId = randomUUID();
    const tenant = stowage.tenant(alice);
    await tenant.registeredSessions.register(sessionId);
    const saved = await checkpointWithImage(tenant.langgraphCheckpoints, sessionId);

    const first = await collect();
    expect(first.deleted).toBe(0);
    // The image and the binary (once, in the value and the write).
    expect(first.rootRefsBySource.langgraphCheckpoints).toBe(2);
    const tuple = await open().tenant(alice).langgraphCheckpoints.getTuple(saved);
    const [message] = tuple!.checkpoint.channel_values.messages as HumanMessage[];
    expect(message).toBeInstanceOf(HumanMessage);
    expect(message!.content).toEqual(picture().content);
    expect(tuple!.checkpoint.channel_values.file).toEqual(bytes);
    expect(tuple!.pendingWrites).toEqual([["task-1", "file", bytes]]);

    const other = randomUUID();
    await tenant.registeredSessions.register(other);
    await tenant.langgraphCheckpoints.put(config(other), emptyCheckpoint(), metadata, {});
    await stowage.deleteSession(alice, sessionId);
    expect(await tenant.langgraphCheckpoints.getTuple(config(sessionId))).toBeUndefined();
    expect(await tenant.langgraphCheckpoints.getTuple(config(other))).toBeDefined();
    expect((await collect()).deleted).toBe(2);
  });
});

const user = (text: string) => ({ role: "user" as const, content: text });

describe("OpenAI Agents sessions in the table", () => {
  it("are the principal's: another principal's session of the same id is another", async () => {
    const { stowage, open } = deployment();
    const sessionId = randomUUID();
    await stowage
      .tenant(alice)
      .openaiAgentsSessions.session(sessionId)
      .addItems([user("alice's")]);
    const bobs = stowage.tenant(bob).openaiAgentsSessions.session(sessionId);
    expect(await bobs.getItems()).toEqual([]);
    expect(await bobs.popItem()).toBeUndefined();
    expect(await stowage.tenant(bob).openaiAgentsSessions.deleteSession(sessionId)).toBe(false);
    await bobs.clearSession();
    expect(await open().tenant(alice).openaiAgentsSessions.session(sessionId).getItems()).toEqual([
      user("alice's"),
    ]);
  });

  it("are deleted with their session, and hold what they reference until then", async () => {
    const { stowage, collect } = deployment();
    const tenant = stowage.tenant(alice);
    const [sessionId, other] = [randomUUID(), randomUUID()];
    for (const id of [sessionId, other]) await tenant.registeredSessions.register(id);
    // A tool output that points at a stored screenshot by its ref.
    const { hash } = await tenant.blobs.put(new Uint8Array(png));
    await tenant.openaiAgentsSessions.session(sessionId).addItems([user(`see blob:sha256:${hash}`)]);
    await tenant.openaiAgentsSessions.session(other).addItems([user("kept")]);
    await stowage
      .tenant(bob)
      .openaiAgentsSessions.session(sessionId)
      .addItems([user("bob's")]);

    expect((await collect()).rootRefsBySource.openaiAgentsSessions).toBe(1);
    expect(await stowage.blobs.has(hash)).toBe(true);
    const report = await stowage.deleteSession(alice, sessionId);
    expect(report.deleted).toMatchObject({ openaiAgentsSessions: true });
    expect(await tenant.openaiAgentsSessions.session(sessionId).getItems()).toEqual([]);
    expect(await tenant.openaiAgentsSessions.session(other).getItems()).toEqual([user("kept")]);
    expect(await stowage.tenant(bob).openaiAgentsSessions.session(sessionId).getItems()).toEqual([
      user("bob's"),
    ]);
    await collect();
    expect(await stowage.blobs.has(hash)).toBe(false);
  });
});

describe("LangGraph and OpenAI Agents records of a session in the trash", () => {
  it("count in its trash entry's bytes, by the layout the README gives, and come back with a restore", async () => {
    const { stowage } = deployment();
    const tenant = stowage.tenant(alice);
    const sessionId = randomUUID();
    await tenant.registeredSessions.register(sessionId);
    await checkpointWithImage(tenant.langgraphCheckpoints, sessionId);
    await tenant.openaiAgentsSessions.session(sessionId).addItems([user("remember PELICAN-42")]);
    // Another session's records are not counted in this one's entry.
    await checkpointWithImage(tenant.langgraphCheckpoints, randomUUID());
    let expected = 0;
    for (const prefix of [`langgraph/user/alice/${sessionId}/`, `openai-agents/user/alice/${sessionId}/`]) {
      const { items } = await stowage.deployment.shared.list({ prefix });
      expect(items.length).toBeGreaterThan(0);
      for (const item of items) expected += item.size;
    }
    const { trash } = await stowage.deleteSession(alice, sessionId, { trashDays: 7 });
    expect(trash?.bytes).toBe(expected);
    expect((await stowage.listTrash(alice)).bytes).toBe(expected);
    await stowage.restoreFromTrash(alice, "session", sessionId);
    expect(await tenant.openaiAgentsSessions.session(sessionId).getItems()).toEqual([
      user("remember PELICAN-42"),
    ]);
    expect(
      (await tenant.langgraphCheckpoints.getTuple(config(sessionId)))?.checkpoint.channel_values.file,
    ).toEqual(bytes);
  });
});

describe("the trash check of the LangGraph saver", () => {
  it("knows every member of the saver's class: one added later must be sorted into guarded or passed through", () => {
    const { stowage } = deployment();
    const saver = stowage.tenant(alice).langgraphCheckpoints;
    // hide-trashed-frameworks.ts guards get, getTuple, list, put, putWrites and
    // getDeltaChannelHistory, and passes the rest through.
    expect(Object.getOwnPropertyNames(Object.getPrototypeOf(saver)).sort()).toEqual(
      [
        "constructor",
        "deleteThread",
        "get",
        "getDeltaChannelHistory",
        "getNextVersion",
        "getTuple",
        "list",
        "put",
        "putWrites",
        "toJSON",
      ].sort(),
    );
    // Members not guarded are the saver's own, bound to it.
    expect(saver.getNextVersion(undefined)).toBe(1);
    expect(JSON.stringify({ saver })).toBe('{"saver":"[StowageCheckpointSaver]"}');
  });
});
