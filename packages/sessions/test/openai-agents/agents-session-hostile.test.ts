import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError, HOSTILE_PREFIXES } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createObjectAgentsSession } from "../../src/openai-agents/create-object-agents-session.js";
import { HOSTILE_IDS } from "../../src/testing/hostile-ids.js";

const SESSION = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
const open = () => {
  const store = createMemoryObjectStore();
  return { store, session: createObjectAgentsSession({ store, sessionId: SESSION }) };
};

describe("createObjectAgentsSession refuses", () => {
  for (const { value, why } of HOSTILE_IDS) {
    it(`the session id ${why}`, async () => {
      await expectStowageError(
        () => createObjectAgentsSession({ store: createMemoryObjectStore(), sessionId: value as string }),
        "INVALID_INPUT",
      );
    });
  }
  for (const { value, why } of HOSTILE_PREFIXES) {
    it(`the prefix ${why}`, async () => {
      await expectStowageError(
        () =>
          createObjectAgentsSession({
            store: createMemoryObjectStore(),
            sessionId: SESSION,
            prefix: value as string,
          }),
        "INVALID_INPUT",
      );
    });
  }
  it("a store that is not an ObjectStore", async () => {
    await expectStowageError(
      () => createObjectAgentsSession({ store: {} as never, sessionId: SESSION }),
      "INVALID_INPUT",
    );
  });
});

describe("a session refuses, storing nothing", () => {
  const cases: [string, (session: ReturnType<typeof open>["session"]) => Promise<unknown>, string][] = [
    ["items that are not an array", (s) => s.addItems("x" as never), "INVALID_INPUT"],
    ["an item that is not an object", (s) => s.addItems([null as never]), "INVALID_INPUT"],
    ["an item that is an array", (s) => s.addItems([[1] as never]), "INVALID_INPUT"],
    [
      "more than 10,000 items",
      (s) => s.addItems(Array.from({ length: 10_001 }, () => ({ role: "user", content: "x" }))),
      "TOO_LARGE",
    ],
    ["a limit that is not an integer", (s) => s.getItems(1.5), "INVALID_INPUT"],
    ["a limit that is not a number", (s) => s.getItems("2" as never), "INVALID_INPUT"],
  ];
  for (const [why, act, code] of cases) {
    it(`${why} (${code})`, async () => {
      const { session, store } = open();
      await expectStowageError(act(session), code as "INVALID_INPUT");
      const keys: string[] = [];
      for await (const item of store.iterate()) keys.push(item.key);
      expect(keys).toEqual([]);
    });
  }
});

describe("a stored record that is not what the session wrote", () => {
  const key = `openai-agents/${SESSION}/000000000001`;
  const records: [string, string, string][] = [
    ["not JSON", "{", "CORRUPT_RECORD"],
    ["not a session record", '{"op":"clear"}', "CORRUPT_RECORD"],
    [
      "an unknown operation",
      `{"stowageAgentsSession":1,"sessionId":"${SESSION}","seq":1,"op":"drop"}`,
      "CORRUPT_RECORD",
    ],
    [
      "a pop of no place",
      `{"stowageAgentsSession":1,"sessionId":"${SESSION}","seq":1,"op":"pop","target":[-1]}`,
      "CORRUPT_RECORD",
    ],
    [
      "another session's record",
      '{"stowageAgentsSession":1,"sessionId":"other","seq":1,"op":"clear"}',
      "FOREIGN_RECORD",
    ],
    [
      "a record of another place",
      `{"stowageAgentsSession":1,"sessionId":"${SESSION}","seq":7,"op":"clear"}`,
      "FOREIGN_RECORD",
    ],
  ];
  for (const [why, text, reason] of records) {
    it(`is INTEGRITY / ${reason} for ${why}`, async () => {
      const { session, store } = open();
      await store.put(key, new TextEncoder().encode(text));
      await expectStowageError(session.getItems(), "INTEGRITY", reason);
    });
  }
});
