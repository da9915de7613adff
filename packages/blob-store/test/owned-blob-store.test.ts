import { createMemoryObjectStore, sha256Hex } from "@stowage/core";
import { expectStowageError, HOSTILE_REFS } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import type { BlobLayout } from "../src/blob-layout.js";
import { createBlobStore } from "../src/blob-store.js";
import { createOwnedBlobStore } from "../src/owned-blob-store.js";

function setup() {
  const objects = createMemoryObjectStore();
  const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
  const marks = createMemoryObjectStore();
  return {
    objects,
    blobs,
    alice: createOwnedBlobStore({ blobs, owner: "user:alice", marks, prefix: "marks/" }),
    bob: createOwnedBlobStore({ blobs, owner: "user:bob", marks, prefix: "marks/" }),
  };
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe("createOwnedBlobStore", () => {
  it("keeps bytes once but lets an owner read only what it stored", async () => {
    const { objects, alice, bob } = setup();
    const secret = bytes("alice's screenshot");
    const hash = sha256Hex(secret);
    expect((await alice.put(secret)).hash).toBe(hash);
    expect(await alice.get(hash)).toEqual(secret);
    expect(await alice.has(`blob:sha256:${hash}`)).toBe(true);

    // Bob knows the hash but never stored the bytes: it does not exist for him.
    expect(await bob.get(hash)).toBeNull();
    expect(await bob.stream(hash)).toBeNull();
    expect(await bob.streamVerified(hash)).toBeNull();
    expect(await bob.stat(hash)).toBeNull();
    expect(await bob.has(hash)).toBe(false);
    await expectStowageError(bob.verify(hash), "NOT_FOUND");
    expect((await bob.list()).items).toEqual([]);

    // Storing the same bytes makes them his too, without a second copy.
    await bob.put(secret);
    expect(await bob.get(hash)).toEqual(secret);
    expect((await objects.list({ prefix: "blobs/" })).items).toHaveLength(1);
  });

  it("put reports created for the owner, never whether another owner stored the bytes", async () => {
    const { alice, bob, blobs } = setup();
    const secret = bytes("alice's contract");
    expect((await alice.put(secret)).created).toBe(true);
    // The shared store has them already, but bob learns only that they are new to him.
    expect((await blobs.put(secret)).created).toBe(false);
    expect((await bob.put(secret)).created).toBe(true);
    expect((await bob.put(new Blob([secret]).stream() as ReadableStream<Uint8Array>)).created).toBe(false);
    expect((await alice.put(secret)).created).toBe(false);
    // After deleting his mark, the bytes are new to him again.
    await bob.delete(sha256Hex(secret));
    expect((await bob.put(secret)).created).toBe(true);
  });

  it("bytes a collection took are new again to the owner who stored them, its mark still there", async () => {
    const { alice, blobs } = setup();
    const chunk = bytes("a chunk of a capture");
    expect((await alice.put(chunk)).created).toBe(true);
    // What garbage collection does to an unreferenced blob: the bytes go, owners' marks stay.
    await blobs.delete(sha256Hex(chunk));
    const again = await alice.put(chunk);
    expect(again.created).toBe(true);
    expect(await alice.get(again.hash)).toEqual(chunk);
    expect((await alice.put(chunk)).created).toBe(false);
  });

  it("delete removes only the owner's mark; the bytes stay for the other owner", async () => {
    const { alice, bob, blobs } = setup();
    const shared = bytes("same bytes");
    await alice.put(shared);
    await bob.put(shared);
    await alice.delete(sha256Hex(shared));
    expect(await alice.get(sha256Hex(shared))).toBeNull();
    expect(await bob.get(sha256Hex(shared))).toEqual(shared);
    expect(await blobs.has(sha256Hex(shared))).toBe(true);
  });

  it("lists and iterates the owner's blobs, skipping marks whose bytes were collected", async () => {
    const { alice, blobs } = setup();
    const kept = await alice.put(bytes("kept"));
    const collected = await alice.put(bytes("collected"));
    await blobs.delete(collected.hash);
    expect((await alice.list()).items.map((item) => item.hash)).toEqual([kept.hash]);
    const iterated: string[] = [];
    for await (const item of alice.iterate()) iterated.push(item.hash);
    expect(iterated).toEqual([kept.hash]);
  });

  it("streams and puts streams like the shared store, and never hands out an address", async () => {
    const { alice } = setup();
    const body = bytes("streamed");
    const stored = await alice.put(new Blob([body]).stream() as ReadableStream<Uint8Array>);
    const stream = (await alice.stream(stored.hash))!;
    expect(new Uint8Array(await new Response(stream).arrayBuffer())).toEqual(body);
    expect(alice.uriFor(stored.hash)).toBeUndefined();
  });

  it.each(HOSTILE_REFS)("refuses the ref %s", async (_why, value) => {
    const { alice } = setup();
    await expectStowageError(alice.get(value as string), "INVALID_INPUT");
    await expectStowageError(alice.delete(value as string), "INVALID_INPUT");
  });

  it.each([
    { owner: "../bob" },
    { owner: "" },
    { owner: "user/alice" },
    { prefix: "marks" },
    { prefix: "../marks/" },
  ])("refuses the options %j", async (bad) => {
    const { blobs } = setup();
    await expectStowageError(
      () => createOwnedBlobStore({ blobs, marks: createMemoryObjectStore(), owner: "user:alice", ...bad }),
      "INVALID_INPUT",
    );
  });

  it("carries nothing that reaches the shared store: only its own methods and the logger", async () => {
    const { objects, blobs, alice, bob } = setup();
    const secret = bytes("alice's screenshot");
    const { hash } = await alice.put(secret);
    expect(Object.keys(bob).sort()).toEqual(
      [
        "delete",
        "get",
        "has",
        "iterate",
        "list",
        "logger",
        "put",
        "stat",
        "stream",
        "streamVerified",
        "uriFor",
        "verify",
      ].sort(),
    );
    for (const key of Reflect.ownKeys(bob)) {
      const value = (bob as unknown as Record<PropertyKey, unknown>)[key];
      expect(value === objects || value === blobs || value === blobs.objects).toBe(false);
    }
    expect(Object.isFrozen(bob)).toBe(true);
    // Every read by the known hash still answers as if the blob did not exist.
    expect(await bob.get(hash)).toBeNull();
    expect(await bob.stat(hash)).toBeNull();
  });

  // What a view used to hand out from the shared store: each reached every owner's bytes or keys.
  it.each(["objects", "keyFor", "layout", "prefix"])("has no %s", (member) => {
    const { bob } = setup();
    expect(member in bob).toBe(false);
  });

  // Marks in the blob store's own ObjectStore whose keys could be blob keys: `<marks prefix><owner>/<hash>`.
  it.each<[string, BlobLayout, string, string | undefined]>([
    ["flat blobs/, marks at the root (owner `blobs` marks `blobs/<hash>`)", "flat", "blobs/", undefined],
    ["flat blobs/, marks under the blob prefix", "flat", "blobs/", "blobs/owners/"],
    ["marks holding the blob prefix", "flat", "data/blobs/", "data/"],
    ["the same prefix", "sharded", "blobs/", "blobs/"],
    ["sharded with no prefix, marks at the root (owner `2d` marks `2d/<hash>`)", "sharded", "", undefined],
    ["sharded with no prefix, marks under their own prefix", "sharded", "", "blob-owners/"],
  ])("refuses overlapping marks: %s", async (_why, layout, blobPrefix, marksPrefix) => {
    const shared = createMemoryObjectStore();
    const blobs = createBlobStore({ store: shared, layout, prefix: blobPrefix });
    await expectStowageError(
      () =>
        createOwnedBlobStore({
          blobs,
          owner: blobPrefix === "" ? "2d" : "blobs",
          marks: shared,
          ...(marksPrefix === undefined ? {} : { prefix: marksPrefix }),
        }),
      "INVALID_INPUT",
    );
  });

  it("accepts marks beside the blobs in one store (the reference app's) or in a store of their own", async () => {
    const shared = createMemoryObjectStore();
    const blobs = createBlobStore({ store: shared, layout: "sharded", prefix: "blobs/" });
    const alice = createOwnedBlobStore({ blobs, owner: "user:alice", marks: shared, prefix: "blob-owners/" });
    const secret = bytes("alice's screenshot");
    const { hash } = await alice.put(secret);
    expect(await alice.get(hash)).toEqual(secret);
    expect(await shared.head(`blob-owners/user:alice/${hash}`)).not.toBeNull();
    const other = createBlobStore({ store: shared, layout: "sharded" });
    const own = createOwnedBlobStore({ blobs: other, owner: "2d", marks: createMemoryObjectStore() });
    expect(await own.get(hash)).toBeNull();
  });
});
