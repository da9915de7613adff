import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, sha256Hex } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { createContentRegistry } from "../../src/content/content-registry.js";
import { iterateContentRefIds } from "../../src/content/record-keys.js";

describe("iterateContentRefIds", () => {
  it("finds the ids of every registry nested below a prefix, and nothing else", async () => {
    const records = createMemoryObjectStore();
    const content = createBlobStore({ store: createMemoryObjectStore() });
    const alice = createContentRegistry({ content, records, prefix: "content-refs/user/alice/" });
    const acme = createContentRegistry({ content, records, prefix: "content-refs/org/acme/" });
    await alice.storeText("alice's notes");
    await acme.storeText("acme's notes");
    await acme.storeText("alice's notes");
    // Keys that only look like records, or sit outside the prefix, are not ids.
    await records.put(`content-refs/stray/${"ab".repeat(32)}.json`, new Uint8Array());
    await records.put(`content-refs/zz/${"ab".repeat(32)}.json`, new Uint8Array());
    await records.put(`elsewhere/ab/${"ab".repeat(32)}.json`, new Uint8Array());

    const ids: string[] = [];
    for await (const id of iterateContentRefIds({ records, prefix: "content-refs/" })) ids.push(id);
    expect(ids.sort()).toEqual(
      [sha256Hex("acme's notes"), sha256Hex("alice's notes"), sha256Hex("alice's notes")].sort(),
    );
  });
});
