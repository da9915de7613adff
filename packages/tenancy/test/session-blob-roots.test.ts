import { expectStowageError } from "@stowage/core/testing";
import { compressChunks, createMemorySessionBlobRepository } from "@stowage/sessions";
import { describe, expect, it } from "vitest";
import { sessionBlobRefs } from "../src/default-stores.js";

const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);

async function collect(refs: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const ref of refs) out.push(ref);
  return out;
}

async function store(
  repository: ReturnType<typeof createMemorySessionBlobRepository>,
  owner: string,
  sessionId: string,
  text: string,
) {
  const raw = new TextEncoder().encode(text);
  await repository.create({
    owner,
    requestId: "req-1",
    agentType: "claude-code",
    sessionId,
    codec: "gzip",
    blob: await compressChunks("gzip", [raw]),
    rawSizeBytes: Buffer.byteLength(text),
  });
}

describe("the session blobs GC root", () => {
  it("reads the refs inside every owner's stored session archive, across pages", async () => {
    const repository = createMemorySessionBlobRepository();
    await store(
      repository,
      "user:alice",
      "11111111-1111-4111-8111-111111111111",
      `{"image":"blob:sha256:${HASH_A}"}\n`,
    );
    await store(
      repository,
      "org:acme",
      "22222222-2222-4222-8222-222222222222",
      `{"x":1}\n{"y":"blob:sha256:${HASH_B}"}\n`,
    );
    expect((await collect(sessionBlobRefs(repository))).sort()).toEqual([HASH_A, HASH_B]);
  });

  it("stops, rather than scanning part of it, at an archive larger than it claims", async () => {
    // Repositories refuse such a blob when it is stored; one stored before that check still may be there.
    const text = `${"x".repeat(4096)}blob:sha256:${HASH_A}`;
    const record = {
      id: 1,
      owner: "user:alice",
      requestId: "req-1",
      agentType: "claude-code",
      sessionId: "33333333-3333-4333-8333-333333333333",
      codec: "gzip" as const,
      blob: await compressChunks("gzip", [new TextEncoder().encode(text)]),
      rawSizeBytes: 100,
      blobSizeBytes: 0,
      storedBytes: 0,
      createdAt: new Date(),
      expiresAt: null,
    };
    const repository = { ...createMemorySessionBlobRepository(), list: async () => ({ records: [record] }) };
    await expectStowageError(collect(sessionBlobRefs(repository)), "TOO_LARGE");
  });
});
