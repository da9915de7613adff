import { randomBytes } from "node:crypto";
import zlib from "node:zlib";
import { concatBytes, StowageError } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { availableCodecs, createCompressStream, isCodecAvailable, SESSION_CODECS } from "./codecs.js";
import { compressChunks, decompressBounded } from "./compress.js";

async function collect(source: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const part of source) parts.push(part.slice());
  return concatBytes(parts);
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "success",
    (err: unknown) => (StowageError.is(err) ? err.code : String(err)),
  );

const text = new TextEncoder().encode(
  '{"type":"user","message":{"content":"run the tests"}}\n'.repeat(20_000),
);

describe("codecs", () => {
  it("gzip and brotli are always available; zstd exactly when node:zlib has it", () => {
    expect(isCodecAvailable("gzip")).toBe(true);
    expect(isCodecAvailable("brotli")).toBe(true);
    const hasZstd = typeof (zlib as unknown as { zstdCompress?: unknown }).zstdCompress === "function";
    expect(isCodecAvailable("zstd")).toBe(hasZstd);
    expect(availableCodecs()).toEqual(SESSION_CODECS.filter((codec) => codec !== "zstd" || hasZstd));
  });

  // Only codecs this Node.js has are round-tripped; the test below covers zstd where it is missing.
  for (const codec of availableCodecs()) {
    it(`${codec} round-trips bytes given in several chunks`, async () => {
      const random = new Uint8Array(randomBytes(300_000));
      const blob = await compressChunks(codec, [text, random, new Uint8Array(0), text]);
      expect(blob.byteLength).toBeLessThan(text.byteLength);
      const out = await collect(decompressBounded(blob, codec, { maxBytes: 10 * 1024 * 1024 }));
      expect(Buffer.from(out).equals(Buffer.concat([text, random, text]))).toBe(true);
    });
  }

  if (!isCodecAvailable("zstd")) {
    it("zstd on a Node.js without it fails with UNAVAILABLE, naming the version it needs", async () => {
      expect(() => createCompressStream("zstd")).toThrow(/Node\.js 22\.15/);
      expect(await codeOf(compressChunks("zstd", [text]))).toBe("UNAVAILABLE");
      expect(await codeOf(collect(decompressBounded(new Uint8Array([1]), "zstd", { maxBytes: 10 })))).toBe(
        "UNAVAILABLE",
      );
    });
  }

  it("an unknown codec tag is INVALID_INPUT", async () => {
    for (const codec of ["lz4", "", "Gzip", undefined]) {
      expect(await codeOf(compressChunks(codec as "gzip", [text]))).toBe("INVALID_INPUT");
      expect(await codeOf(collect(decompressBounded(text, codec as "gzip", { maxBytes: 10 })))).toBe(
        "INVALID_INPUT",
      );
    }
  });
});

describe("decompressBounded", () => {
  it("stops a 1 GiB brotli bomb at the limit with TOO_LARGE, holding little memory", async () => {
    const zeros = new Uint8Array(64 * 1024 * 1024);
    const bomb = await compressChunks(
      "brotli",
      Array.from({ length: 16 }, () => zeros),
    );
    expect(bomb.byteLength).toBeLessThan(100_000);
    let seen = 0;
    const rssBefore = process.memoryUsage.rss();
    const err = await (async () => {
      for await (const part of decompressBounded(bomb, "brotli", { maxBytes: 8 * 1024 * 1024 }))
        seen += part.byteLength;
    })().catch((e: unknown) => e);
    expect(StowageError.is(err, "TOO_LARGE")).toBe(true);
    expect(seen).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(process.memoryUsage.rss() - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it("a gzip bomb fails the same way", async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    const err = await collect(decompressBounded(bomb, "gzip", { maxBytes: 1024 * 1024 })).catch(
      (e: unknown) => e,
    );
    expect(StowageError.is(err, "TOO_LARGE")).toBe(true);
  });

  for (const codec of ["gzip", "brotli"] as const) {
    it(`${codec}: truncated, corrupted or other-codec data fails with INTEGRITY`, async () => {
      const original = concatBytes([text, new Uint8Array(randomBytes(50_000))]);
      const blob = await compressChunks(codec, [original]);
      const truncated = blob.subarray(0, Math.floor(blob.byteLength / 2));
      const corrupted = blob.slice();
      for (let i = 20; i < corrupted.byteLength; i += 97) corrupted[i]! ^= 0xff;
      const other = await compressChunks(codec === "gzip" ? "brotli" : "gzip", [text]);
      for (const bad of [truncated, other, new Uint8Array(randomBytes(4096))]) {
        expect(await codeOf(collect(decompressBounded(bad, codec, { maxBytes: 100 * 1024 * 1024 })))).toBe(
          "INTEGRITY",
        );
      }
      // gzip carries a CRC; brotli does not and may decode flipped bits into other bytes, which the
      // archive's per-file sha256 then catches (see restore-hostile.test.ts).
      const decoded = await collect(
        decompressBounded(corrupted, codec, { maxBytes: 100 * 1024 * 1024 }),
      ).catch((e: unknown) => e);
      if (codec === "gzip") expect(StowageError.is(decoded, "INTEGRITY")).toBe(true);
      else if (decoded instanceof Uint8Array)
        expect(Buffer.from(decoded).equals(Buffer.from(original))).toBe(false);
      else expect(StowageError.is(decoded, "INTEGRITY")).toBe(true);
    });
  }

  it("an aborted signal fails with ABORTED", async () => {
    const controller = new AbortController();
    controller.abort();
    const blob = await compressChunks("gzip", [text]);
    expect(
      await codeOf(collect(decompressBounded(blob, "gzip", { maxBytes: 1e9, signal: controller.signal }))),
    ).toBe("ABORTED");
    expect(await codeOf(compressChunks("gzip", [text], { signal: controller.signal }))).toBe("ABORTED");
  });
});
