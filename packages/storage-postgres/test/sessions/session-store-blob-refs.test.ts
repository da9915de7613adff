import { createHash, randomUUID } from "node:crypto";
import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { expectStowageError, seededRandom } from "@stowage/core/testing";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { createPostgresSessionStore } from "../../src/sessions/session-store.js";
import { scanSessionStoreForBlobRefs } from "../../src/sessions/session-store-blob-refs.js";
import { describeBackends } from "../backends.js";
import { memoryContentStore } from "./memory-content-store.js";

// More rows with refs than one page of the scan (500), so that it goes on past the first.
const ENTRIES = 620;

/** An Anthropic image block whose payload is `size` seeded bytes: about 1,070 base64 characters for 800. */
function imageEntry(
  random: () => number,
  uuid: string,
  size = 800,
): { entry: SessionStoreEntry; sha256: string } {
  const bytes = Buffer.from(Array.from({ length: size }, () => Math.floor(random() * 256)));
  return {
    sha256: createHash("sha256").update(bytes).digest("hex"),
    entry: {
      type: "user",
      uuid,
      message: {
        role: "user",
        content: [
          {
            type: "image",
            source: { type: "base64", media_type: "image/png", data: bytes.toString("base64") },
          },
        ],
      },
    },
  };
}

async function collect(source: AsyncIterable<string>): Promise<Set<string>> {
  const hashes = new Set<string>();
  for await (const hash of source) hashes.add(hash);
  return hashes;
}

describeBackends("scanSessionStoreForBlobRefs", (backend) => {
  const db = () => backend.connection().db;

  it("yields every blob a later load reads: deleting all else from the blob store loses nothing", async () => {
    await db().execute(
      sql`TRUNCATE session_store_entries, session_store_keys, session_store_trash, session_store_trash_keys, session_store_trash_entries`,
    );
    const random = seededRandom(5);
    const blobs = memoryContentStore();
    const store = createPostgresSessionStore({ db: db(), blobs });
    const big = { projectKey: "proj-a", sessionId: randomUUID() };
    const small = { projectKey: "proj-b", sessionId: randomUUID(), subpath: "subagents/agent-1" };
    const bigEntries = Array.from({ length: ENTRIES }, (_, i) => imageEntry(random, `big-${i}`));
    const smallEntries = [imageEntry(random, "small-0"), imageEntry(random, "small-1")];
    await store.append(big, [{ type: "user", uuid: "text", message: { content: "no image" } }]);
    await store.append(
      big,
      bigEntries.map(({ entry }) => entry),
    );
    await store.append(
      small,
      smallEntries.map(({ entry }) => entry),
    );
    // What a collection would do with this one root: every blob it does not name goes.
    const orphan = await blobs.put(new Uint8Array(2_000).fill(7));
    const roots = await collect(scanSessionStoreForBlobRefs(db()));
    expect(roots).toEqual(new Set([...bigEntries, ...smallEntries].map(({ sha256 }) => sha256)));
    for (const hash of [...blobs.blobs.keys()]) if (!roots.has(hash)) blobs.blobs.delete(hash);
    expect(blobs.blobs.has(orphan.hash)).toBe(false);
    expect((await store.load(big))?.slice(1)).toEqual(bigEntries.map(({ entry }) => entry));
    expect(await store.load(small)).toEqual(smallEntries.map(({ entry }) => entry));
    // A deleted session's images stay roots while it is in the trash (a restore loads them),
    // and are roots no more once it is purged.
    const everything = new Set([...bigEntries, ...smallEntries].map(({ sha256 }) => sha256));
    await store.delete({ projectKey: small.projectKey, sessionId: small.sessionId });
    expect(await store.load(small)).toBeNull();
    expect(await collect(scanSessionStoreForBlobRefs(db()))).toEqual(everything);
    const [trashed] = await store.listTrash(small.projectKey);
    await store.purgeFromTrash(small.projectKey, trashed!.trashId);
    expect(await collect(scanSessionStoreForBlobRefs(db()))).toEqual(
      new Set(bigEntries.map(({ sha256 }) => sha256)),
    );
  });

  it("an aborted scan is ABORTED; a database that is none is INVALID_INPUT", async () => {
    await expectStowageError(
      collect(scanSessionStoreForBlobRefs(db(), { signal: AbortSignal.abort() })),
      "ABORTED",
    );
    await expectStowageError(collect(scanSessionStoreForBlobRefs({} as never)), "INVALID_INPUT");
  });
});
