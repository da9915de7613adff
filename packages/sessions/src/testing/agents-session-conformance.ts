import { randomUUID } from "node:crypto";
import { loadVitest, seededRandom } from "@stowage/core/testing";

const { describe, expect, it } = await loadVitest("@stowage/sessions/testing");

/** One item of a session as the SDK passes it (`AgentInputItem`): a JSON object. */
type Item = Record<string, unknown>;

/**
 * The `Session` contract of `@openai/agents-core`, written out so that this entry's types do not
 * need the SDK: any SDK `Session` is one.
 */
export interface AgentsSessionUnderTest {
  getSessionId(): Promise<string>;
  getItems(limit?: number): Promise<Record<string, unknown>[]>;
  addItems(items: Record<string, unknown>[]): Promise<void>;
  popItem(): Promise<Record<string, unknown> | undefined>;
  clearSession(): Promise<void>;
}

export interface AgentsSessionConformanceOptions {
  /** Suite title, e.g. `object Session on fs`. */
  name: string;
  /**
   * A new session object for `sessionId` over the backend under test. Called again for the same
   * id, it must give another object over the same stored session, as another process would open
   * it. Every test uses session ids of its own, so one backend may serve the whole suite.
   */
  openSession(sessionId: string): AgentsSessionUnderTest | Promise<AgentsSessionUnderTest>;
  /** When set, the suite is skipped and this reason printed. */
  skip?: string;
}

// Items as the SDK's protocol shapes them: user input has no id; model output does.
const user = (text: string): Item => ({ role: "user", content: text });
const reply = (id: string, text: string): Item => ({
  id,
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});
const toolCall = (id: string, callId: string): Item => ({
  id,
  type: "function_call",
  callId,
  name: "get_weather",
  arguments: JSON.stringify({ city: "Zürich" }),
  status: "completed",
});
const toolResult = (callId: string): Item => ({
  type: "function_call_result",
  name: "get_weather",
  callId,
  status: "completed",
  output: { type: "text", text: "14°C, 😀" },
});

const freshId = () => `ses_${randomUUID().replaceAll("-", "")}`;
const keyOf = (item: Item | undefined) => JSON.stringify(item);

type Open = () => Promise<{
  session: AgentsSessionUnderTest;
  sessionId: string;
  again(): Promise<AgentsSessionUnderTest>;
}>;

/** What the SDK documents for every `Session` (the interface's TSDoc, `MemorySession`'s behaviour). */
function describeDocumentedBehaviours(open: Open): void {
  describe("the SDK's documented behaviours", () => {
    it("getSessionId gives the session's id; a new session has no items", async () => {
      const { session, sessionId } = await open();
      expect(await session.getSessionId()).toBe(sessionId);
      expect(await session.getItems()).toEqual([]);
    });

    it("getItems gives every item in the order added, deep-equal, across batches", async () => {
      const { session } = await open();
      const turn = [
        user("weather?"),
        toolCall("fc_1", "call_1"),
        toolResult("call_1"),
        reply("msg_1", "14°C"),
      ];
      await session.addItems(turn.slice(0, 2));
      await session.addItems(turn.slice(2));
      await session.addItems([user("thanks")]);
      expect(await session.getItems()).toEqual([...turn, user("thanks")]);
    });

    it("getItems(limit) gives the latest limit items, oldest first; more than there are gives all", async () => {
      const { session } = await open();
      await session.addItems([user("1"), user("2"), user("3")]);
      await session.addItems([user("4")]);
      expect(await session.getItems(1)).toEqual([user("4")]);
      expect(await session.getItems(3)).toEqual([user("2"), user("3"), user("4")]);
      expect(await session.getItems(4)).toEqual([user("1"), user("2"), user("3"), user("4")]);
      expect(await session.getItems(50)).toEqual([user("1"), user("2"), user("3"), user("4")]);
      // MemorySession's answer for a limit of zero.
      expect(await session.getItems(0)).toEqual([]);
    });

    it("popItem removes and returns the newest item; on an empty session it is undefined", async () => {
      const { session } = await open();
      expect(await session.popItem()).toBeUndefined();
      await session.addItems([user("1"), reply("msg_2", "2")]);
      expect(await session.popItem()).toEqual(reply("msg_2", "2"));
      expect(await session.getItems()).toEqual([user("1")]);
      expect(await session.popItem()).toEqual(user("1"));
      expect(await session.popItem()).toBeUndefined();
      await session.addItems([user("3")]);
      expect(await session.getItems()).toEqual([user("3")]);
    });

    it("clearSession removes every item; the session takes new ones after", async () => {
      const { session, again } = await open();
      await session.addItems([user("1"), reply("msg_1", "2")]);
      await session.clearSession();
      expect(await session.getItems()).toEqual([]);
      expect(await session.popItem()).toBeUndefined();
      await session.clearSession(); // clearing an empty session is fine
      await session.addItems([user("3")]);
      expect(await session.getItems()).toEqual([user("3")]);
      expect(await (await again()).getItems()).toEqual([user("3")]);
    });

    it("addItems([]) changes nothing", async () => {
      const { session } = await open();
      await session.addItems([]);
      expect(await session.getItems()).toEqual([]);
      await session.addItems([user("1")]);
      await session.addItems([]);
      expect(await session.getItems()).toEqual([user("1")]);
    });

    it("items given back are copies: changing one changes nothing stored", async () => {
      const { session } = await open();
      const item = reply("msg_1", "kept");
      await session.addItems([item]);
      (item.content as Item[])[0]!.text = "changed after addItems";
      const [read] = await session.getItems();
      (read!.content as Item[])[0]!.text = "changed after getItems";
      expect(await session.getItems()).toEqual([reply("msg_1", "kept")]);
    });

    it("what one session object stores, another object of the same session reads (another process)", async () => {
      const { session, again } = await open();
      await session.addItems([user("1"), reply("msg_1", "2")]);
      const other = await again();
      expect(await other.getItems()).toEqual([user("1"), reply("msg_1", "2")]);
      expect(await other.popItem()).toEqual(reply("msg_1", "2"));
      expect(await session.getItems()).toEqual([user("1")]);
    });
  });
}

/** The SDK's `MemorySession` and the session under test, given the same random operations. */
function itAgreesWithMemorySession(open: Open): void {
  it("agrees with the SDK's MemorySession on random operation sequences", async () => {
    const { MemorySession } = await import("@openai/agents-core");
    for (const seed of [31, 32]) {
      const random = seededRandom(seed);
      const { session, again } = await open();
      const reference = new MemorySession();
      for (let step = 0; step < 60; step++) {
        const roll = random();
        if (roll < 0.5) {
          const batch = Array.from({ length: Math.floor(random() * 4) }, (_, i) =>
            user(`${seed}.${step}.${i}`),
          );
          await session.addItems(batch);
          await reference.addItems(batch as never);
        } else if (roll < 0.8) {
          expect(await session.popItem()).toEqual(await reference.popItem());
        } else if (roll < 0.85) {
          await session.clearSession();
          await reference.clearSession();
        } else {
          const limit = Math.floor(random() * 6);
          expect(await session.getItems(limit)).toEqual(await reference.getItems(limit));
        }
      }
      expect(await session.getItems()).toEqual(await reference.getItems());
      expect(await (await again()).getItems()).toEqual(await reference.getItems());
    }
  });
}

/** Idempotent retries and races between session objects: what a Stowage session adds. */
function describeWhatStowageAdds(
  open: Open,
  openSession: AgentsSessionConformanceOptions["openSession"],
): void {
  describe("what Stowage adds", () => {
    it("a retried addItems batch is not stored twice: an item whose id is stored is dropped", async () => {
      const { session, again } = await open();
      const batch = [toolCall("fc_1", "call_1"), reply("msg_1", "hello")];
      await session.addItems(batch);
      await session.addItems(batch);
      await (await again()).addItems(batch); // the retry from another process
      await session.addItems([reply("msg_1", "hello"), reply("msg_2", "new"), reply("msg_2", "new")]);
      expect(await session.getItems()).toEqual([...batch, reply("msg_2", "new")]);
    });

    it("items without an id are stored every time, as the SDK's own sessions store them", async () => {
      const { session } = await open();
      await session.addItems([user("yes"), toolResult("call_1")]);
      await session.addItems([user("yes"), toolResult("call_1")]);
      expect(await session.getItems()).toEqual([
        user("yes"),
        toolResult("call_1"),
        user("yes"),
        toolResult("call_1"),
      ]);
    });

    it("sessions are apart: another session's adds, pops and clears change nothing here", async () => {
      const a = await openSession(freshId());
      const b = await openSession(freshId());
      await a.addItems([user("a")]);
      await b.addItems([user("b1"), user("b2")]);
      await b.popItem();
      await b.clearSession();
      expect(await a.getItems()).toEqual([user("a")]);
      expect(await b.getItems()).toEqual([]);
    });

    it("concurrent addItems from several session objects: every item once, each batch whole and in order", async () => {
      const { sessionId } = await open();
      const writers = await Promise.all([0, 1, 2].map(() => openSession(sessionId)));
      const batches = Array.from({ length: 9 }, (_, b) => [
        user(`${b}.0`),
        reply(`msg_${b}`, `${b}.1`),
        user(`${b}.2`),
      ]);
      await Promise.all(batches.map((batch, b) => writers[b % 3]!.addItems(batch)));
      const stored = await writers[0]!.getItems();
      expect(stored).toHaveLength(27);
      for (let start = 0; start < stored.length; start += 3) {
        const b = Number(String(stored[start]!.content).split(".")[0]);
        expect(stored.slice(start, start + 3)).toEqual(batches[b]);
      }
    });

    it("popItem racing addItems in other session objects loses no item and returns none twice", async () => {
      const { sessionId } = await open();
      const writers = await Promise.all([0, 1, 2].map(() => openSession(sessionId)));
      const added = Array.from({ length: 12 }, (_, i) => user(`item ${i}`));
      const popped: (Item | undefined)[] = [];
      await Promise.all([
        ...added.map((item, i) => writers[i % 2]!.addItems([item])),
        ...Array.from({ length: 6 }, async () => popped.push(await writers[2]!.popItem())),
      ]);
      const taken = popped.filter((item) => item !== undefined);
      const left = await writers[0]!.getItems();
      // Every item added is either still stored or was returned by exactly one pop.
      expect([...left, ...taken].map(keyOf).sort()).toEqual(added.map(keyOf).sort());
      expect(new Set(taken.map(keyOf)).size).toBe(taken.length);
    });
  });
}

/**
 * The behaviour every OpenAI Agents SDK `Session` Stowage ships must have, on any backend: what
 * the SDK documents (order, `getItems(limit)` the latest `limit` in order, `popItem` newest first
 * and `undefined` when empty, `clearSession`, copies given back, agreement with the SDK's
 * `MemorySession` on random operations), then what Stowage adds (a retried `addItems` batch not
 * stored twice, sessions apart, concurrent adds, `popItem` racing `addItems` in other session
 * objects). Needs vitest and `@openai/agents-core` (for `MemorySession`).
 */
export function describeAgentsSessionConformance(options: AgentsSessionConformanceOptions): void {
  const { name, openSession } = options;
  if (options.skip) {
    console.warn(`[stowage] ${name} conformance skipped: ${options.skip}`);
    describe.skip(`${name} conformance (skipped: ${options.skip})`, () => {
      it("needs its backend", () => {});
    });
    return;
  }
  const open: Open = async () => {
    const sessionId = freshId();
    return { sessionId, session: await openSession(sessionId), again: async () => openSession(sessionId) };
  };
  describe(`${name} conformance`, () => {
    describeDocumentedBehaviours(open);
    itAgreesWithMemorySession(open);
    describeWhatStowageAdds(open, openSession);
  });
}
