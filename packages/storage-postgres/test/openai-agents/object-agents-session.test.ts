import { randomBytes, randomUUID } from "node:crypto";
import type { AgentInputItem } from "@openai/agents-core";
import { createObjectAgentsSession } from "@stowage/sessions/openai-agents";
import { expect, it } from "vitest";
import { createPostgresObjectStore } from "../../src/object-store.js";
import { describeBackends } from "../backends.js";

// The SDK's documented Session behaviour (as in @stowage/sessions' own tests) on this package's
// objects table: create-only puts are conditional inserts here, so races are the database's.
const user = (text: string): AgentInputItem => ({ role: "user", content: text });
const reply = (id: string, text: string): AgentInputItem => ({
  id,
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});

describeBackends("OpenAI Agents Session", (backend) => {
  const open = (sessionId = randomUUID()) => {
    const store = createPostgresObjectStore({
      db: backend.connection().db,
      namespace: `agents-${randomBytes(6).toString("hex")}`,
    });
    return { store, sessionId, session: createObjectAgentsSession({ store, sessionId }) };
  };

  it("orders items, gives the latest N, pops the newest, clears", async () => {
    const { session } = open();
    await session.addItems([user("1"), user("2")]);
    await session.addItems([user("3")]);
    expect(await session.getItems(2)).toEqual([user("2"), user("3")]);
    expect(await session.popItem()).toEqual(user("3"));
    expect(await session.getItems()).toEqual([user("1"), user("2")]);
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await session.popItem()).toBeUndefined();
  });

  it("does not store a retried batch twice", async () => {
    const { session } = open();
    const batch = [reply("msg_1", "a"), reply("msg_2", "b")];
    await session.addItems(batch);
    await session.addItems(batch);
    expect(await session.getItems()).toEqual(batch);
  });

  it("loses no item when pops race adds from other session objects", async () => {
    const { store, sessionId } = open();
    const writers = [0, 1, 2].map(() => createObjectAgentsSession({ store, sessionId }));
    const added = Array.from({ length: 10 }, (_, i) => user(`item ${i}`));
    const popped: (AgentInputItem | undefined)[] = [];
    await Promise.all([
      ...added.map((item, i) => writers[i % 2]!.addItems([item])),
      ...Array.from({ length: 5 }, async () => popped.push(await writers[2]!.popItem())),
    ]);
    const taken = popped.filter((item) => item !== undefined);
    const key = (item: AgentInputItem) => JSON.stringify(item);
    const left = await writers[0]!.getItems();
    expect([...left, ...taken].map(key).sort()).toEqual(added.map(key).sort());
  });
});
