import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError, HOSTILE_PREFIXES } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createObjectAgentsSession } from "../../src/openai-agents/create-object-agents-session.js";
import { deleteObjectAgentsSession } from "../../src/openai-agents/delete-object-agents-session.js";
import { HOSTILE_IDS } from "../../src/testing/hostile-ids.js";

const user = (text: string) => ({ role: "user" as const, content: text });

async function keysUnder(store: ReturnType<typeof createMemoryObjectStore>, prefix: string) {
  const keys: string[] = [];
  for await (const item of store.iterate({ prefix })) keys.push(item.key);
  return keys;
}

describe("deleteObjectAgentsSession", () => {
  it("removes every record of the session (a clear record too), and nothing of another session", async () => {
    const store = createMemoryObjectStore();
    const session = createObjectAgentsSession({ store, sessionId: "ses_1" });
    // "ses_10" starts with "ses_1": a prefix match must not take it.
    const neighbour = createObjectAgentsSession({ store, sessionId: "ses_10" });
    await session.addItems([user("a"), user("b")]);
    await session.popItem();
    await session.clearSession();
    await session.addItems([user("c")]);
    await neighbour.addItems([user("kept")]);
    expect(await deleteObjectAgentsSession({ store, sessionId: "ses_1" })).toBe(true);
    expect(await keysUnder(store, "openai-agents/ses_1/")).toEqual([]);
    expect(await session.getItems()).toEqual([]);
    expect(await neighbour.getItems()).toEqual([user("kept")]);
    // The session can be used again from nothing, by the object that read it before.
    await session.addItems([user("again")]);
    expect(await createObjectAgentsSession({ store, sessionId: "ses_1" }).getItems()).toEqual([
      user("again"),
    ]);
  });

  it("is false for a session never written, and deletes under the prefix given", async () => {
    const store = createMemoryObjectStore();
    expect(await deleteObjectAgentsSession({ store, sessionId: "ses_none" })).toBe(false);
    const prefix = "tenant/user/alice/";
    await createObjectAgentsSession({ store, sessionId: "ses_1", prefix }).addItems([user("a")]);
    await createObjectAgentsSession({ store, sessionId: "ses_1" }).addItems([user("default prefix")]);
    expect(await deleteObjectAgentsSession({ store, sessionId: "ses_1", prefix })).toBe(true);
    expect(await keysUnder(store, prefix)).toEqual([]);
    expect(await createObjectAgentsSession({ store, sessionId: "ses_1" }).getItems()).toEqual([
      user("default prefix"),
    ]);
  });

  it("with an aborted signal fails with ABORTED", async () => {
    const store = createMemoryObjectStore();
    await createObjectAgentsSession({ store, sessionId: "ses_1" }).addItems([user("a")]);
    const controller = new AbortController();
    controller.abort();
    await expectStowageError(
      deleteObjectAgentsSession({ store, sessionId: "ses_1" }, { signal: controller.signal }),
      "ABORTED",
    );
  });

  it("refuses hostile session ids and prefixes, and a store that is not one", async () => {
    const store = createMemoryObjectStore();
    for (const { value } of HOSTILE_IDS)
      await expectStowageError(
        () => deleteObjectAgentsSession({ store, sessionId: value as string }),
        "INVALID_INPUT",
      );
    for (const { value } of HOSTILE_PREFIXES)
      await expectStowageError(
        () => deleteObjectAgentsSession({ store, sessionId: "ses_1", prefix: value as string }),
        "INVALID_INPUT",
      );
    await expectStowageError(
      () => deleteObjectAgentsSession({ store: {} as never, sessionId: "ses_1" }),
      "INVALID_INPUT",
    );
  });
});
