import { createMemoryObjectStore, sha256Hex } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { iterateHotStateContentIds } from "../../src/store/hot-state-content-ids.js";
import { createHotStateStore } from "../../src/store/hot-state-store.js";

async function ids(store: ReturnType<typeof createMemoryObjectStore>, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const id of iterateHotStateContentIds({ store, prefix })) found.push(id);
  return found;
}

describe("iterateHotStateContentIds", () => {
  it("finds the artifact_index ids of every version of every store below a prefix", async () => {
    const store = createMemoryObjectStore();
    const notes = sha256Hex("alice's notes");
    const plan = sha256Hex("acme's plan");
    const alice = createHotStateStore({ store, prefix: "hot-state/user/alice/" }).dispatcherFor("s1");
    await alice.write(
      { session_id: "s1", objective: "x", artifact_index: [{ artifact_id: notes, type: "doc" }] },
      { expectedVersion: 0 },
    );
    // The next version drops the entry: the id stays a root while any version holds it.
    await alice.write({ session_id: "s1", objective: "y" }, { expectedVersion: 1 });
    const acme = createHotStateStore({ store, prefix: "hot-state/org/acme/" }).dispatcherFor("s2");
    await acme.write(
      { session_id: "s2", objective: "z", artifact_index: [{ artifact_id: plan, type: "plan" }] },
      { expectedVersion: 0 },
    );
    await store.put("elsewhere/s9/000000000001.json", new Uint8Array());
    expect((await ids(store, "hot-state/")).sort()).toEqual([notes, plan].sort());
  });

  it("a damaged version stops the iteration (INTEGRITY) instead of being skipped", async () => {
    const store = createMemoryObjectStore();
    await store.put("hot-state/user/bob/s1/000000000001.json", new TextEncoder().encode("{ torn"));
    await expectStowageError(ids(store, "hot-state/"), "INTEGRITY");
  });
});
