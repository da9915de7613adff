import { randomBytes } from "node:crypto";
import zlib from "node:zlib";
import { concatBytes, StowageError } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import {
  availableCodecs,
  createCompressStream,
  isCodecAvailable,
  SESSION_CODECS,
} from "../../src/codec/codecs.js";
import { compressChunks, decompressBounded } from "../../src/codec/compress.js";

async function collect(source: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const part of source) parts.push(part.slice());
  return concatBytes(parts);
}

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

  it("a size hint (output in chunks of up to 4 MiB) changes no byte: the blobs are node:zlib's one-shot ones", async () => {
    const random = new Uint8Array(randomBytes(3_000_000));
    const input = Buffer.concat([text, random, text, random]);
    const gzipped = await compressChunks("gzip", [text, random, text, random], {
      sizeHint: input.byteLength,
    });
    expect(Buffer.from(gzipped).equals(zlib.gzipSync(input, { level: 6 }))).toBe(true);
    const { constants } = zlib;
    const brotli = await compressChunks("brotli", [input], { sizeHint: input.byteLength, brotliQuality: 4 });
    const oneShot = zlib.brotliCompressSync(input, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 4,
        [constants.BROTLI_PARAM_LGWIN]: 18,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: input.byteLength,
      },
    });
    expect(Buffer.from(brotli).equals(oneShot)).toBe(true);
  });

  if (!isCodecAvailable("zstd")) {
    it("zstd on a Node.js without it fails with UNAVAILABLE, naming the version it needs", async () => {
      expect(() => createCompressStream("zstd")).toThrow(/Node\.js 22\.15/);
      await expectStowageError(compressChunks("zstd", [text]), "UNAVAILABLE");
      await expectStowageError(
        collect(decompressBounded(new Uint8Array([1]), "zstd", { maxBytes: 10 })),
        "UNAVAILABLE",
      );
    });
  }

  it("an unknown codec tag is INVALID_INPUT", async () => {
    for (const codec of ["lz4", "", "Gzip", undefined]) {
      await expectStowageError(compressChunks(codec as "gzip", [text]), "INVALID_INPUT");
      await expectStowageError(
        collect(decompressBounded(text, codec as "gzip", { maxBytes: 10 })),
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
    await expectStowageError(async () => {
      for await (const part of decompressBounded(bomb, "brotli", { maxBytes: 8 * 1024 * 1024 }))
        seen += part.byteLength;
    }, "TOO_LARGE");
    expect(seen).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(process.memoryUsage.rss() - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it("a gzip bomb fails the same way", async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    await expectStowageError(
      collect(decompressBounded(bomb, "gzip", { maxBytes: 1024 * 1024 })),
      "TOO_LARGE",
    );
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
        await expectStowageError(
          collect(decompressBounded(bad, codec, { maxBytes: 100 * 1024 * 1024 })),
          "INTEGRITY",
        );
      }
      // gzip carries a CRC; brotli does not and may decode flipped bits into other bytes, which the
      // archive's per-file sha256 then catches (see restore-hostile.test.ts).
      const decoding = collect(decompressBounded(corrupted, codec, { maxBytes: 100 * 1024 * 1024 }));
      if (codec === "gzip") await expectStowageError(decoding, "INTEGRITY");
      else {
        const decoded = await decoding.catch((e: unknown) => e);
        if (decoded instanceof Uint8Array)
          expect(Buffer.from(decoded).equals(Buffer.from(original))).toBe(false);
        else expect(StowageError.is(decoded, "INTEGRITY")).toBe(true);
      }
    });
  }

  it("an aborted signal fails with ABORTED", async () => {
    const controller = new AbortController();
    controller.abort();
    const blob = await compressChunks("gzip", [text]);
    await expectStowageError(
      collect(decompressBounded(blob, "gzip", { maxBytes: 1e9, signal: controller.signal })),
      "ABORTED",
    );
    await expectStowageError(compressChunks("gzip", [text], { signal: controller.signal }), "ABORTED");
  });
});
