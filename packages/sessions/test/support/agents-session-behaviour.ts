import { type AgentInputItem, MemorySession, type Session } from "@openai/agents-core";
import type { ObjectStore } from "@stowage/core";
import { seededRandom } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createObjectAgentsSession } from "../../src/openai-agents/create-object-agents-session.js";

// Items as the SDK's protocol shapes them (a user message, an assistant message with its id).
const user = (text: string): AgentInputItem => ({ role: "user", content: text });
const assistant = (id: string, text: string): AgentInputItem => ({
  id,
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});

let counter = 0;
const freshId = () => `ses_${Date.now().toString(36)}${(counter++).toString(36)}`;

/** The SDK's documented `Session` behaviour, on sessions over the ObjectStore `makeStore` gives. */
export function describeAgentsSessionBehaviour(name: string, makeStore: () => Promise<ObjectStore>): void {
  const open = async (sessionId = freshId()) => {
    const store = await makeStore();
    return { store, session: createObjectAgentsSession({ store, sessionId }), sessionId };
  };

  describe(`OpenAI Agents Session on ${name}`, () => {
    it("keeps items in the order they were added, and gives its id", async () => {
      const { session, sessionId } = await open();
      expect(await session.getSessionId()).toBe(sessionId);
      expect(await session.getItems()).toEqual([]);
      await session.addItems([user("a"), assistant("msg_1", "b")]);
      await session.addItems([user("c")]);
      expect(await session.getItems()).toEqual([user("a"), assistant("msg_1", "b"), user("c")]);
    });

    it("gives the latest N items in order for a limit", async () => {
      const { session } = await open();
      await session.addItems([user("1"), user("2"), user("3"), user("4")]);
      expect(await session.getItems(2)).toEqual([user("3"), user("4")]);
      expect(await session.getItems(10)).toEqual([user("1"), user("2"), user("3"), user("4")]);
      expect(await session.getItems(0)).toEqual([]);
    });

    it("pops the newest item, and undefined when empty", async () => {
      const { session } = await open();
      expect(await session.popItem()).toBeUndefined();
      await session.addItems([user("1"), user("2")]);
      expect(await session.popItem()).toEqual(user("2"));
      expect(await session.popItem()).toEqual(user("1"));
      expect(await session.popItem()).toBeUndefined();
      await session.addItems([user("3")]);
      expect(await session.getItems()).toEqual([user("3")]);
    });

    it("clears every item, and takes new ones after", async () => {
      const { session, store, sessionId } = await open();
      await session.addItems([user("1"), user("2")]);
      await session.clearSession();
      expect(await session.getItems()).toEqual([]);
      await session.addItems([user("3")]);
      expect(await session.getItems()).toEqual([user("3")]);
      // Another process's view of the same session agrees.
      expect(await createObjectAgentsSession({ store, sessionId }).getItems()).toEqual([user("3")]);
    });

    it("does not store a retried batch twice (items with an id)", async () => {
      const { session } = await open();
      const batch = [assistant("msg_1", "hello"), assistant("msg_2", "again")];
      await session.addItems(batch);
      await session.addItems(batch);
      await session.addItems([assistant("msg_2", "again"), assistant("msg_3", "new")]);
      expect(await session.getItems()).toEqual([...batch, assistant("msg_3", "new")]);
    });

    it("stores items without an id every time, as the SDK's memory session does", async () => {
      const { session } = await open();
      await session.addItems([user("yes")]);
      await session.addItems([user("yes")]);
      expect(await session.getItems()).toEqual([user("yes"), user("yes")]);
    });

    it("keeps sessions apart", async () => {
      const store = await makeStore();
      const a = createObjectAgentsSession({ store, sessionId: freshId() });
      const b = createObjectAgentsSession({ store, sessionId: freshId() });
      await a.addItems([user("a")]);
      await b.addItems([user("b")]);
      await b.clearSession();
      expect(await a.getItems()).toEqual([user("a")]);
      expect(await b.getItems()).toEqual([]);
    });

    it("agrees with the SDK's MemorySession on random operation sequences", async () => {
      const random = seededRandom(31);
      const { session } = await open();
      const reference: Session = new MemorySession();
      for (let step = 0; step < 60; step++) {
        const roll = random();
        if (roll < 0.5) {
          const batch = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) => user(`${step}.${i}`));
          await Promise.all([session.addItems(batch), reference.addItems(batch)]);
        } else if (roll < 0.8) {
          expect(await session.popItem()).toEqual(await reference.popItem());
        } else if (roll < 0.85) {
          await Promise.all([session.clearSession(), reference.clearSession()]);
        } else {
          const limit = Math.floor(random() * 5);
          expect(await session.getItems(limit)).toEqual(await reference.getItems(limit));
        }
      }
      expect(await session.getItems()).toEqual(await reference.getItems());
    });

    it("loses no item when pops race adds in other processes", async () => {
      const { store, sessionId } = await open();
      const writers = [0, 1, 2].map(() => createObjectAgentsSession({ store, sessionId }));
      const added = Array.from({ length: 12 }, (_, i) => user(`item ${i}`));
      const popped: (AgentInputItem | undefined)[] = [];
      await Promise.all([
        ...added.map((item, i) => writers[i % 2]!.addItems([item])),
        ...Array.from({ length: 6 }, async () => popped.push(await writers[2]!.popItem())),
      ]);
      const taken = popped.filter((item) => item !== undefined);
      const left = await writers[0]!.getItems();
      // Every item added is either still there or was returned by exactly one pop.
      const key = (item: AgentInputItem) => JSON.stringify(item);
      expect([...left, ...taken].map(key).sort()).toEqual(added.map(key).sort());
      expect(new Set(taken.map(key)).size).toBe(taken.length);
    });
  });
}
