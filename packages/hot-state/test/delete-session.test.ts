// Deleting a session's hot state: what a server does when a session is deleted. A later write
// starts the session again from version 1.
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError, HOSTILE_KEYS } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createHotStateStore } from "../src/index.js";
import { captureLogger } from "./capture-logger.js";

describe("HotStateStore.deleteSession", () => {
  it("deletes every version and, with its token, the dispatcher claim; readers and writers start again from version 1", async () => {
    const store = createMemoryObjectStore();
    const hotState = createHotStateStore({ store, logger: captureLogger() });
    const other = createHotStateStore({ store, logger: captureLogger() });
    const claim = await hotState.claimDispatcher("doomed");
    const dispatcher = hotState.dispatcherFor("doomed", { token: claim.token });
    for (let i = 0; i < 5; i++) await dispatcher.write({ session_id: "doomed", objective: `step ${i}` });
    await hotState.dispatcherFor("kept").write({ session_id: "kept" });
    // Another process's reader has seen version 5.
    expect((await other.reader.latest("doomed"))?.version).toBe(5);

    await hotState.deleteSession("doomed", { token: claim.token });
    expect(await hotState.reader.latest("doomed")).toBeNull();
    expect(await other.reader.latest("doomed")).toBeNull();
    expect((await hotState.reader.latest("kept"))?.version).toBe(1);
    // Unclaimed again: a new dispatcher writes version 1 without a token, and may claim it.
    const fresh = hotState.dispatcherFor("doomed");
    expect((await fresh.write({ session_id: "doomed", objective: "again" })).version).toBe(1);
    expect((await other.reader.latest("doomed"))?.version).toBe(1);
    expect((await hotState.claimDispatcher("doomed")).token).toEqual(expect.any(String));
  });

  it("refuses to delete a claimed session without the claim's token: versions and claim stay, in every process", async () => {
    const store = createMemoryObjectStore();
    const hotState = createHotStateStore({ store, logger: captureLogger() });
    const { token } = await hotState.claimDispatcher("held");
    await hotState.dispatcherFor("held", { token }).write({ session_id: "held", objective: "mine" });
    // An agent holding the same credentials, in another process: no token, or one it made up.
    const agent = createHotStateStore({ store, logger: captureLogger() });
    for (const attempt of [{}, { token: "x".repeat(43) }, { token: `${token}x` }]) {
      const err = await expectStowageError(agent.deleteSession("held", attempt), "FORBIDDEN");
      expect(err.reason).toBe("NOT_DISPATCHER");
    }
    expect((await agent.reader.latest("held"))?.state.objective).toBe("mine");
    // The claim still holds: the agent can neither write nor claim, the dispatcher still writes.
    await expectStowageError(
      agent.dispatcherFor("held").write({ session_id: "held" }, { expectedVersion: 1 }),
      "FORBIDDEN",
    );
    await expectStowageError(agent.claimDispatcher("held"), "CONFLICT");
    const next = await hotState
      .dispatcherFor("held", { token })
      .write({ session_id: "held" }, { expectedVersion: 1 });
    expect(next.version).toBe(2);
  });

  it("never deletes a claim made while an unclaimed session was being deleted", async () => {
    const memory = createMemoryObjectStore();
    let claimed: string | undefined;
    const hotState = createHotStateStore({ store: memory, logger: captureLogger() });
    // The dispatcher claims the session while the deletion lists what to delete.
    const racing: typeof memory = {
      ...memory,
      async *iterate(options) {
        claimed ??= (await hotState.claimDispatcher("raced")).token;
        yield* memory.iterate(options);
      },
    };
    const deleter = createHotStateStore({ store: racing, logger: captureLogger() });
    await hotState.dispatcherFor("raced").write({ session_id: "raced" });
    await deleter.deleteSession("raced");
    expect(claimed).toEqual(expect.any(String));
    await expectStowageError(deleter.claimDispatcher("raced"), "CONFLICT");
    await expectStowageError(hotState.dispatcherFor("raced").write({ session_id: "raced" }), "FORBIDDEN");
    expect(
      (await hotState.dispatcherFor("raced", { token: claimed }).write({ session_id: "raced" })).version,
    ).toBe(1);
  });

  it("refuses hostile session ids", async () => {
    const hotState = createHotStateStore({ store: createMemoryObjectStore(), logger: captureLogger() });
    for (const id of [...HOSTILE_KEYS, "", "a/b"]) {
      await expectStowageError(() => hotState.deleteSession(id as string), "INVALID_INPUT");
    }
  });
});
