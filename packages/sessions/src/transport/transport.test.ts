import { StowageError } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { buildArchive } from "../../test/build-archive.js";
import { HOSTILE_IDS } from "../testing/hostile-ids.js";
import { fromTransport, toTransport } from "./transport.js";

const sessionId = "4c5d6e7f-8091-4a2b-9c3d-4e5f60718293";
const text = (value: string) => new TextEncoder().encode(value);
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return "success";
  } catch (err) {
    return StowageError.is(err) ? err.code : String(err);
  }
};

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

  it("never guesses a missing codec", () => {
    const { sessionCodec: _missing, ...wire } = toTransport(archive);
    const err = (() => {
      try {
        fromTransport(wire);
      } catch (e) {
        return e;
      }
    })();
    expect(StowageError.is(err, "INVALID_INPUT")).toBe(true);
    expect((err as StowageError).reason).toBe("MISSING_CODEC");
  });

  it("rejects malformed fields with INVALID_INPUT and oversized blobs with TOO_LARGE", () => {
    const wire = toTransport(archive);
    const cases: [Record<string, unknown> | unknown, string][] = [
      [null, "INVALID_INPUT"],
      ["string", "INVALID_INPUT"],
      [[wire], "INVALID_INPUT"],
      [{ ...wire, sessionCodec: "lz4" }, "INVALID_INPUT"],
      [{ ...wire, sessionCodec: 1 }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "not base64!" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "YWJj\n" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "YWJ" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "YW=j" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "ab-_" }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: 42 }, "INVALID_INPUT"],
      [{ ...wire, sessionRawSizeBytes: 0 }, "INVALID_INPUT"],
      [{ ...wire, sessionRawSizeBytes: "10" }, "INVALID_INPUT"],
      [{ ...wire, sessionRawSizeBytes: undefined }, "INVALID_INPUT"],
      [{ ...wire, sessionBlob: "A".repeat(4 * 1024 * 1024) }, "TOO_LARGE"],
    ];
    for (const [value, code] of cases) {
      expect(codeOf(() => fromTransport(value, { maxBlobBytes: 1024 * 1024 }))).toBe(code);
    }
    for (const { value } of HOSTILE_IDS) {
      expect(codeOf(() => fromTransport({ ...wire, sessionId: value }))).toBe("INVALID_INPUT");
    }
  });

  it("toTransport validates what it is given", () => {
    expect(codeOf(() => toTransport({ ...archive, codec: "zip" as "gzip" }))).toBe("INVALID_INPUT");
    expect(codeOf(() => toTransport({ ...archive, sessionId: "../x" }))).toBe("INVALID_INPUT");
  });
});
