import { mkdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { restoreSession } from "../../src/archive/restore-session.js";
import { verifySessionBlob } from "../../src/archive/verify-session-blob.js";
import { createMemorySessionBlobRepository } from "../../src/repository/memory-session-blobs.js";
import { fromTransport, toTransport } from "../../src/transport/transport.js";

const base = await tempDirectory("stowage-compat-");
const sessionId = "6b7c8d9e-0f1a-4b2c-8d3e-4f5a6b7c8d9e";
const cwd = join(base, "workspace");
await mkdir(cwd);
const realCwd = await realpath(cwd);
/** Claude Code transcript lines, as the document's container gzips them (`gzip(content)`). */
const transcript = [
  {
    type: "user",
    sessionId,
    cwd: realCwd,
    uuid: "u1",
    message: { role: "user", content: "The secret fact is 42." },
  },
  {
    type: "assistant",
    sessionId,
    cwd: realCwd,
    uuid: "a1",
    parentUuid: "u1",
    message: { role: "assistant", content: [{ type: "text", text: "Noted." }] },
  },
]
  .map((line) => JSON.stringify(line))
  .join("\n")
  .concat("\n");
/** The design document's container response: `{ sessionId, sessionBlob: base64(gzip(jsonl)) }`, no codec. */
const documentResponse = { success: true, sessionId, sessionBlob: gzipSync(transcript).toString("base64") };

describe("the compatibility format: the design document's gzipped JSONL transcript", () => {
  it("is stored as it comes (no codec, no size), read back, and restored as <sessionId>.jsonl", async () => {
    const repo = createMemorySessionBlobRepository();
    const stored = await repo.create({
      owner: "user:alice",
      requestId: "req-doc",
      ...fromTransport(documentResponse),
    });
    expect(stored).toMatchObject({
      codec: "gzip",
      agentType: "claude-code",
      rawSizeBytes: Buffer.byteLength(transcript),
    });
    const latest = await repo.getLatestForRequest("user:alice", "req-doc");
    const followUp = JSON.parse(JSON.stringify(toTransport(latest!)));
    const configDir = join(base, "fresh-config");
    const restored = await restoreSession(fromTransport(followUp), { configDir, cwd });
    expect(restored.format).toBe("jsonl");
    expect(restored.transcriptPath).toBe(
      join(configDir, "projects", restored.projectKey!, `${sessionId}.jsonl`),
    );
    expect(await readFile(restored.transcriptPath!, "utf8")).toBe(transcript);
  });

  it("takes a blob of several gzip members (RFC 1952), stored with the size it decompresses to", async () => {
    // What a sender that appends gzip output turn by turn holds: one member per turn.
    const [first, ...rest] = transcript.split(/(?<=\n)/);
    const members = Buffer.concat([gzipSync(first!), gzipSync(rest.join(""))]);
    const repo = createMemorySessionBlobRepository();
    const stored = await repo.create({
      owner: "user:alice",
      requestId: "req-members",
      ...fromTransport({ sessionId, sessionBlob: members.toString("base64") }),
    });
    expect(stored.rawSizeBytes).toBe(Buffer.byteLength(transcript));
    const latest = await repo.getLatestForRequest("user:alice", "req-members");
    const configDir = join(base, "members-config");
    const restored = await restoreSession(fromTransport(JSON.parse(JSON.stringify(toTransport(latest!)))), {
      configDir,
      cwd,
    });
    expect(await readFile(restored.transcriptPath!, "utf8")).toBe(transcript);
    expect(restored.files).toEqual([expect.objectContaining({ size: Buffer.byteLength(transcript) })]);
    // A size the sender states must still be the right one.
    const stated = { sessionId, sessionBlob: members.toString("base64"), sessionRawSizeBytes: 7 };
    await expectStowageError(
      repo.create({ owner: "user:alice", requestId: "r", ...fromTransport(stated) }),
      "INTEGRITY",
      "RAW_SIZE_MISMATCH",
    );
  });

  it.each([
    ["a number", "1"],
    ["a string", '"x"'],
    ["null", "null"],
    ["an array", '[{"type":"user"}]'],
  ])("refuses a line that is %s, not an object: no Claude Code entry is", async (_what, line) => {
    const lines = `${transcript}${line}\n`;
    const error = await expectStowageError(
      verifySessionBlob(fromTransport({ sessionId, sessionBlob: gzipSync(lines).toString("base64") })),
      "INVALID_INPUT",
    );
    expect(error.reason).toBe("BAD_JSONL");
  });

  it("the design's own restore reads what it stored: gunzip gives the transcript back", async () => {
    const archive = fromTransport(documentResponse);
    expect(await verifySessionBlob(archive)).toMatchObject({ format: "jsonl" });
  });

  it("needs to be told where (cwd or projectKey): the transcript records no project", async () => {
    const error = await expectStowageError(
      restoreSession(fromTransport(documentResponse), { configDir: join(base, "nowhere") }),
      "INVALID_INPUT",
    );
    expect(error.reason).toBe("PROJECT_UNKNOWN");
  });

  it("is Claude Code's only: stored as a Codex or OpenCode session it is refused", async () => {
    const repo = createMemorySessionBlobRepository();
    for (const agentType of ["codex", "opencode"]) {
      const error = await expectStowageError(
        repo.create({
          owner: "user:alice",
          requestId: "req-doc",
          ...fromTransport({ ...documentResponse, agentType }),
        }),
        "INVALID_INPUT",
      );
      expect(error.reason).toBe("UNSUPPORTED_AGENT");
    }
  });

  it("junk posted in the document's form is refused when stored, not at the follow-up run", async () => {
    const repo = createMemorySessionBlobRepository();
    const junk = { sessionId, sessionBlob: Buffer.from("definitely not gzip at all").toString("base64") };
    await expectStowageError(() => fromTransport(junk), "INTEGRITY");
    const labelled = { ...junk, sessionCodec: "gzip", sessionRawSizeBytes: 4096 };
    await expectStowageError(
      repo.create({ owner: "user:alice", requestId: "r", ...fromTransport(labelled) }),
      "INTEGRITY",
    );
    const withSize = { ...junk, sessionCodec: "gzip", sessionRawSizeBytes: 999_999_999 };
    await expectStowageError(
      repo.create({ owner: "user:alice", requestId: "r", ...fromTransport(withSize) }),
      "TOO_LARGE",
    );
    expect(await repo.getLatestForRequest("user:alice", "r")).toBeNull();
  });
});
