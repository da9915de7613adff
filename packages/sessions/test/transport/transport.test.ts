import { gzipSync } from "node:zlib";
import type { StowageErrorCode } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { HOSTILE_IDS } from "../../src/testing/hostile-ids.js";
import { fromTransport, toTransport } from "../../src/transport/transport.js";
import { buildArchive } from "../build-archive.js";

const sessionId = "4c5d6e7f-8091-4a2b-9c3d-4e5f60718293";
const text = (value: string) => new TextEncoder().encode(value);

const archive = await buildArchive({
  sessionId,
  codec: "brotli",
  files: [{ path: `${sessionId}.jsonl`, content: text("{}\n") }],
});

describe("toTransport / fromTransport", () => {
  it("round-trips through JSON as { sessionId, sessionBlob (base64), sessionCodec, sessionRawSizeBytes }", () => {
    const wire = JSON.parse(JSON.stringify({ success: true, ...toTransport(archive) }));
    expect(wire.sessionId).toBe(sessionId);
    expect(wire.sessionCodec).toBe("brotli");
    expect(Buffer.from(wire.sessionBlob, "base64").equals(Buffer.from(archive.blob))).toBe(true);
    const back = fromTransport(wire);
    expect(back.sessionId).toBe(sessionId);
    expect(back.codec).toBe("brotli");
    expect(back.rawSizeBytes).toBe(archive.rawSizeBytes);
    expect(Buffer.from(back.blob).equals(Buffer.from(archive.blob))).toBe(true);
  });

  it("reads the design document's form, { sessionId, sessionBlob }, as one gzipped JSONL transcript", () => {
    const jsonl = `${JSON.stringify({ type: "user", sessionId, message: { role: "user", content: "hi" } })}\n`;
    // What the document's container does: gzip the file, base64 the result.
    const sessionBlob = gzipSync(Buffer.from(jsonl)).toString("base64");
    const back = fromTransport({ sessionId, sessionBlob });
    expect(back.codec).toBe("gzip");
    expect(back.agentType).toBe("claude-code");
    // gzip's trailer records the size (RFC 1952, ISIZE).
    expect(back.rawSizeBytes).toBe(Buffer.byteLength(jsonl));
  });

  it("carries the agent: toTransport writes agentType, fromTransport checks it", async () => {
    const wire = toTransport({ ...archive, agent: "codex" });
    expect(wire.agentType).toBe("codex");
    expect(fromTransport(wire).agentType).toBe("codex");
    expect(toTransport(archive).agentType).toBe("claude-code");
    for (const agentType of ["claude", "", 7, "../codex"]) {
      await expectStowageError(() => fromTransport({ ...wire, agentType }), "INVALID_INPUT", "UNKNOWN_AGENT");
    }
  });

  it("rejects malformed fields with INVALID_INPUT and oversized blobs with TOO_LARGE", async () => {
    const wire = toTransport(archive);
    const cases: [Record<string, unknown> | unknown, StowageErrorCode][] = [
      [null, "INVALID_INPUT"],
      ["string", "INVALID_INPUT"],
      [[wire], "INVALID_INPUT"],
      [{ ...wire, sessionCodec: "lz4" }, "INVALID_INPUT"],
      [{ ...wire, sessionCodec: 1 }, "INVALID_INPUT"],
      // Absent is the compatibility format's gzip; null is not absent.
      [{ ...wire, sessionCodec: null }, "INVALID_INPUT"],
      [{ ...wire, sessionRawSizeBytes: null }, "INVALID_INPUT"],
      [{ ...wire, agentType: null }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "not base64!" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "YWJj\n" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "YWJ" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "YW=j" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "ab-_" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "A===" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "====" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "YWJj=YWJ" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "YWJjZA=\u0000" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: `${"YWJj".repeat(100_000)}YW\u00e9=` }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: 42 }, "INVALID_INPUT"],
      [{ ...wire, sessionRawSizeBytes: 0 }, "INVALID_INPUT"],
      [{ ...wire, sessionRawSizeBytes: "10" }, "INVALID_INPUT"],
      [{ ...wire, sessionRawSizeBytes: undefined }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "A".repeat(4 * 1024 * 1024) }, "TOO_LARGE"],
    ];
    for (const [value, code] of cases) {
      await expectStowageError(() => fromTransport(value, { maxBlobBytes: 1024 * 1024 }), code);
    }
    for (const { value } of HOSTILE_IDS) {
      await expectStowageError(() => fromTransport({ ...wire, sessionId: value }), "INVALID_INPUT");
    }
  });

  it("takes a blob of tens of megabytes: the base64 check does not grow the stack with the length", () => {
    // 48 MiB of arbitrary bytes, under the 64 MiB default: a whole-string pattern overflowed at about 3 MiB.
    const bytes = new Uint8Array(48 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i % 251;
    const big = { ...archive, codec: "brotli" as const, blob: bytes };
    const back = fromTransport(JSON.parse(JSON.stringify(toTransport(big))));
    expect(back.blob.byteLength).toBe(bytes.byteLength);
    expect(Buffer.from(back.blob).equals(Buffer.from(bytes))).toBe(true);
  });

  it("toTransport validates what it is given", async () => {
    await expectStowageError(() => toTransport({ ...archive, codec: "zip" as "gzip" }), "INVALID_INPUT");
    await expectStowageError(() => toTransport({ ...archive, sessionId: "../x" }), "INVALID_INPUT");
  });
});
