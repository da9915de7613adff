import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentSessionsOf, openAgentSession, registerAgentSession } from "../../src/shared/agent-sessions.js";
import { createSharedStores } from "../../src/shared/shared-stores.js";

const alice = { kind: "user", id: "alice" } as const;
const bob = { kind: "user", id: "bob" } as const;
let dir: string;
let shared: ReturnType<typeof createSharedStores>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "stowage-agent-sessions-"));
  shared = createSharedStores({ shared: createMemoryObjectStore() });
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("registerAgentSession / openAgentSession", () => {
  it("a registration makes the session file on this host; registering again is no error", async () => {
    const files = agentSessionsOf(dir, alice);
    expect(await registerAgentSession(shared.registeredSessions(alice), files, "s-1")).toBe(true);
    expect(await registerAgentSession(shared.registeredSessions(alice), files, "s-1")).toBe(false);
    const names = await readdir(join(dir, "user", "alice"));
    expect(names.filter((name) => name.endsWith("_s-1.jsonl"))).toHaveLength(1);
  });

  it("opens a session registered elsewhere (no file here) by making its file", async () => {
    await shared.registeredSessions(alice).register("s-2");
    const opened = await openAgentSession(
      shared.registeredSessions(alice),
      agentSessionsOf(dir, alice),
      "s-2",
    );
    expect(opened.sessionId).toBe("s-2");
    expect((await agentSessionsOf(dir, alice).list()).map((session) => session.sessionId)).toEqual(["s-2"]);
  });

  it.each([
    ["an id neither registered nor here", alice, "s-3"],
    ["another principal's registered session", bob, "s-4"],
  ])("is NOT_FOUND for %s, and makes nothing", async (_name, asker, id) => {
    await shared.registeredSessions(alice).register("s-4");
    await expectStowageError(
      openAgentSession(shared.registeredSessions(asker), agentSessionsOf(dir, asker), id),
      "NOT_FOUND",
      "SESSION_NOT_FOUND",
    );
    expect(await agentSessionsOf(dir, asker).list()).toEqual([]);
  });

  it("is NOT_FOUND for a session being deleted (nothing is made into it)", async () => {
    const registered = shared.registeredSessions(alice);
    await registered.register("s-5");
    await registered.markDeleting("s-5");
    await expectStowageError(
      openAgentSession(registered, agentSessionsOf(dir, alice), "s-5"),
      "NOT_FOUND",
      "SESSION_NOT_FOUND",
    );
  });

  it("refuses an id that is not a safe session id before touching anything", async () => {
    await expectStowageError(
      openAgentSession(shared.registeredSessions(alice), agentSessionsOf(dir, alice), "../bob"),
      "INVALID_INPUT",
    );
  });
});
