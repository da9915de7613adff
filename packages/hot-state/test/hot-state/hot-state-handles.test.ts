import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../capture-logger.js";
import { createHotState, type HotStateView } from "../../src/hot-state/hot-state-handles.js";

const handles = () => createHotState({ sessionId: "sess-1", logger: captureLogger() });

describe("hot state roles", () => {
  it("lets the dispatcher write and every view read the same build", () => {
    const { dispatcher, viewFor } = handles();
    const executor = viewFor("executor");
    expect(executor.current()).toBeUndefined();
    expect(executor.revision()).toBe(0);
    const build = dispatcher.write({ session_id: "sess-1", objective: "ship" });
    expect(executor.current()).toBe(build);
    expect(viewFor("planner").current()!.state.objective).toBe("ship");
    expect(executor.revision()).toBe(1);
    expect(dispatcher.current()).toBe(build);
  });

  it("gives other roles a view with no way to write", () => {
    const { viewFor } = handles();
    for (const role of ["executor", "planner", "system"] as const) {
      const view = viewFor(role);
      expect(Object.keys(view).sort()).toEqual(["current", "revision", "role", "sessionId"]);
      expect("write" in view).toBe(false);
      expect("update" in view).toBe(false);
      expect(Object.isFrozen(view)).toBe(true);
      expect(() => {
        (view as unknown as { write: unknown }).write = () => {};
      }).toThrow(TypeError);
      // @ts-expect-error a view has no write method: writing is not expressible for other roles
      expect(() => view.write({ session_id: "sess-1" })).toThrow(TypeError);
    }
  });

  it("never hands the write capability to a role by name", async () => {
    const { viewFor } = handles();
    await expectStowageError(() => viewFor("dispatcher" as never), "INVALID_INPUT");
    await expectStowageError(() => viewFor("admin" as never), "INVALID_INPUT");
  });

  it("shares a frozen state that readers cannot change in place", () => {
    const { dispatcher, viewFor } = handles();
    dispatcher.write({ session_id: "sess-1", constraints: ["no network"] });
    const view: HotStateView = viewFor("executor");
    expect(() => {
      (view.current()!.state.constraints as string[]).push("anything goes");
    }).toThrow(TypeError);
    expect(dispatcher.current()!.state.constraints).toEqual(["no network"]);
  });

  it("refuses a state of another session and keeps the current one", async () => {
    const { dispatcher } = handles();
    dispatcher.write({ session_id: "sess-1" });
    await expectStowageError(() => dispatcher.write({ session_id: "sess-2" }), "INVALID_INPUT");
    expect(dispatcher.current()!.state.session_id).toBe("sess-1");
    expect(dispatcher.revision()).toBe(1);
  });

  it("keeps the previous build when a write is invalid", async () => {
    const { dispatcher } = handles();
    const first = dispatcher.write({ session_id: "sess-1", objective: "a" });
    await expectStowageError(
      () => dispatcher.write({ session_id: "sess-1", risk_level: "extreme" }),
      "INVALID_INPUT",
    );
    expect(dispatcher.current()).toBe(first);
  });

  it("updates from the current state", async () => {
    const { dispatcher } = handles();
    dispatcher.write({ session_id: "sess-1", accepted_decisions: ["a"] });
    const next = dispatcher.update((state) => ({
      ...state,
      accepted_decisions: [...(state?.accepted_decisions ?? []), "b"],
    }));
    expect(next.state.accepted_decisions).toEqual(["a", "b"]);
    await expectStowageError(() => dispatcher.update("nope" as never), "INVALID_INPUT");
  });

  it("needs a session id", async () => {
    await expectStowageError(() => createHotState({ sessionId: "" }), "INVALID_INPUT");
    await expectStowageError(() => createHotState(undefined as never), "INVALID_INPUT");
  });
});
