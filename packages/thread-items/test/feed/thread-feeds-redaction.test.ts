import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { toolCallItem, toolResultItem } from "../../src/builders/build-items.js";
import { createThreadFeeds } from "../../src/feed/thread-feeds.js";

// AWS's own published example access key id (IAM docs) and a .env line of the kind an agent reads.
const KEY_ID = "AKIAIOSFODNN7EXAMPLE";
const ENV_FILE = "DATABASE_URL=postgres://app@db/app\nSTRIPE_SECRET=sk_test_4eC39HqLyjWDarjtT1zdp7dc\n";
const ref = { jobId: "job-1", alias: "main" };

async function everyStoredByte(store: ObjectStore): Promise<string> {
  let all = "";
  for await (const { key } of store.iterate({ prefix: "" })) {
    all += new TextDecoder().decode((await store.get(key)) ?? new Uint8Array());
  }
  return all;
}

describe("a thread is shared: secrets are redacted before anything of a post is stored", () => {
  it("the posted item, its full payload and every stored byte hold the kind, never the secret", async () => {
    const store = createMemoryObjectStore();
    const feeds = createThreadFeeds({ store });
    await feeds.post(ref, toolCallItem({ name: "Read", invocationId: "t1", input: { file_path: ".env" } }));
    const posted = await feeds.post(
      ref,
      toolResultItem({ invocationId: "t1", output: `${ENV_FILE}aws: ${KEY_ID}\n` }),
    );
    const expected =
      "DATABASE_URL=postgres://app@db/app\nSTRIPE_SECRET=[REDACTED:stripe-key]\naws: [REDACTED:aws-access-key-id]\n";
    expect(posted.metadata).toMatchObject({ tool: { output: expected } });
    expect(posted.redactions).toEqual([
      { kind: "stripe-key", path: "metadata.tool.output", index: 49 },
      { kind: "aws-access-key-id", path: "metadata.tool.output", index: 76 },
    ]);
    const [, stored] = (await feeds.items(ref)).items;
    expect(stored).toEqual(posted);
    expect(await feeds.fullItem(ref, posted.id!)).toEqual(posted);
    const bytes = await everyStoredByte(store);
    expect(bytes).not.toContain(KEY_ID);
    expect(bytes).not.toContain("4eC39HqLyjWDarjtT1zdp7dc");
  });

  it("redactions are the feeds' to stamp: a client's own is dropped, redacting or not", async () => {
    const claimed = [{ kind: "none", path: "x", index: 0 }];
    for (const redactSecrets of [true, false]) {
      const feeds = createThreadFeeds({ store: createMemoryObjectStore(), redactSecrets });
      const item = { ...toolResultItem({ invocationId: "t", output: "clean" }), redactions: claimed };
      expect((await feeds.post(ref, item)).redactions).toBeUndefined();
    }
  });

  it("a deployment whose threads are never shared turns it off: the item is stored as posted", async () => {
    const feeds = createThreadFeeds({ store: createMemoryObjectStore(), redactSecrets: false });
    const posted = await feeds.post(ref, toolResultItem({ invocationId: "t", output: ENV_FILE }));
    expect(posted.metadata).toMatchObject({ tool: { output: ENV_FILE } });
    expect(posted.redactions).toBeUndefined();
  });

  it.each([["yes"], [1], [null]])("refuses redactSecrets %j", async (value) => {
    await expectStowageError(
      () => createThreadFeeds({ store: createMemoryObjectStore(), redactSecrets: value as never }),
      "INVALID_INPUT",
    );
  });
});

describe("a post of many secrets", () => {
  it("a log of 10,000 tokens is posted, every one redacted: the item lists 256 places and counts the rest", async () => {
    // Before, every place was listed: 113,798 of them made a 14 MiB item 8 MB over its budget even
    // cut, and the thread failed for good.
    const store = createMemoryObjectStore();
    const feeds = createThreadFeeds({ store });
    const output = `${KEY_ID}\n`.repeat(10_000);
    const posted = await feeds.post(ref, toolResultItem({ invocationId: "t1", output }));
    expect(posted.redactions).toHaveLength(256);
    // 10,001 in all: the brief in `content` quotes the output's first line.
    expect(posted.redactions_omitted).toBe(10_001 - 256);
    expect((await feeds.thread(ref))?.status).toBe("active");
    const full = await feeds.fullItem(ref, posted.id!);
    expect(full?.metadata).toMatchObject({
      tool: { output: "[REDACTED:aws-access-key-id]\n".repeat(10_000) },
    });
    expect(await everyStoredByte(store)).not.toContain(KEY_ID);
  });

  it("a client's own redactions_omitted is dropped like its redactions", async () => {
    const feeds = createThreadFeeds({ store: createMemoryObjectStore() });
    const item = {
      ...toolResultItem({ invocationId: "t1", output: "nothing secret" }),
      redactions_omitted: 5,
    };
    const posted = await feeds.post(ref, item);
    expect(posted).not.toHaveProperty("redactions_omitted");
    expect(posted).not.toHaveProperty("redactions");
  });
});
