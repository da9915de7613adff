import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it, vi } from "vitest";
import type { DataKeys } from "../../src/encryption/data-keys.js";
import { sealSessionStoreRows } from "../../src/encryption/sealed-session-store-rows.js";

// The sealed text of a SessionStore row, built here byte by byte from the format its source
// describes (not by `seal`): `stwe4:` texts hold the length of the UTF-8 bytes (4 bytes,
// little-endian) and then one LZ4 block of them (the block format of the LZ4 project's
// lz4_Block_format.md: sequences of a token, literals, a 2-byte offset and a match, the last one
// literals alone); the earlier versions, still read, `stwe3:` the length (big-endian) and the
// bytes compressed with raw DEFLATE, `stwe2:` the DEFLATE stream alone and `stwe1:` the bytes as
// they are; each version bound to a name of its own. Data key fixed, so every byte is this file's.
const DATA_KEY = randomBytes(32);
const DATA_KEY_ID = randomBytes(16).toString("hex");
const keys = {
  current: async () => ({ id: DATA_KEY_ID, key: DATA_KEY }),
  dataKey: async (_scope: string, id: string) => {
    if (id !== DATA_KEY_ID) throw new Error(`no data key ${id}`);
    return DATA_KEY;
  },
} as unknown as DataKeys;
const seal = sealSessionStoreRows(keys, { kind: "user", id: "alice" });
const BOUND_TO = "entries/-workspace-app/s1/";

/**
 * What a text's AES-256-GCM takes, by the format: the key HKDF'd from the data key and the
 * header's salt (its last 16 bytes), the nonce (8 zero bytes, then the index), and the additional
 * data (the header, the index, "last" — every text is one segment — and the name).
 */
function gcmInputs(header: Buffer, indexBytes: Buffer, name: string) {
  const salt = header.subarray(21);
  return {
    key: Buffer.from(hkdfSync("sha256", DATA_KEY, salt, Buffer.from("stowage/object-key/v1"), 32)),
    nonce: Buffer.concat([Buffer.alloc(8), indexBytes]),
    aad: Buffer.concat([header, indexBytes, Buffer.from([1]), Buffer.from(name, "utf8")]),
  };
}

/** A sealed text: `tag`, then base64 of header | index | AES-256-GCM(plaintext) | GCM tag. */
function handSealed(tag: string, name: string, plaintext: Uint8Array, index = 0): string {
  const header = Buffer.concat([
    Buffer.from("STWE"),
    Buffer.from([1]),
    Buffer.from(DATA_KEY_ID, "hex"),
    randomBytes(16),
  ]);
  const indexBytes = Buffer.alloc(4);
  indexBytes.writeUInt32BE(index);
  const { key, nonce, aad } = gcmInputs(header, indexBytes, name);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return tag + Buffer.concat([header, indexBytes, ciphertext, cipher.getAuthTag()]).toString("base64");
}

const LZ4_NAME = `session-store-lz4/user/alice/${BOUND_TO}`;
const SIZED_NAME = `session-store-sized/user/alice/${BOUND_TO}`;
const DEFLATED_NAME = `session-store-deflated/user/alice/${BOUND_TO}`;
const UNCOMPRESSED_NAME = `session-store/user/alice/${BOUND_TO}`;
const text = `{"type":"user","message":"${"ünïcødé ✓ ".repeat(500)}"}`;
/** A `stwe3:` body: `length` (default the bytes' own) then `deflated` (default the bytes compressed). */
function sizedBody(bytes: Uint8Array, length = bytes.byteLength, deflated = deflateRawSync(bytes)): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(length);
  return Buffer.concat([prefix, deflated]);
}
/** A length field of LZ4's block format: 15 in the token, then bytes of 255 and the rest. */
function lengthBytes(extra: number): number[] {
  const bytes: number[] = [];
  for (; extra >= 255; extra -= 255) bytes.push(255);
  bytes.push(extra);
  return bytes;
}

/** An LZ4 block of `bytes` as one sequence of literals alone (no match): valid, if not small. */
function literalBlock(bytes: Uint8Array): Buffer {
  const length = bytes.byteLength;
  const token = Math.min(length, 15) << 4;
  return Buffer.concat([Buffer.from([token, ...(length >= 15 ? lengthBytes(length - 15) : [])]), bytes]);
}

/** A `stwe4:` body: `length` (default the text's own), little-endian, then `block`. */
function lz4Body(block: Uint8Array, length: number): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32LE(length);
  return Buffer.concat([prefix, block]);
}

/**
 * "abc", then a match 3 back of 9 bytes ("abcabcabc", copied as it is written), then the
 * literals "xyzab" (a block ends with at least five): 17 bytes.
 */
const MATCHING_BLOCK = Buffer.from([0x35, ...Buffer.from("abc"), 3, 0, 0x50, ...Buffer.from("xyzab")]);

const opened = async (texts: string[]) =>
  (await seal.open(BOUND_TO, texts)).map((bytes) => Buffer.from(bytes).toString("utf8"));

/** The plaintext of a text `seal` wrote, opened here by hand (the key is this file's). */
function handOpened(written: string, name: string, index = 0): Buffer {
  const bytes = Buffer.from(written.slice(6), "base64");
  const indexBytes = bytes.subarray(37, 41);
  const { key, nonce, aad } = gcmInputs(bytes.subarray(0, 37), indexBytes, name);
  const decipher = createDecipheriv("aes-256-gcm", key, nonce);
  decipher.setAAD(aad);
  decipher.setAuthTag(bytes.subarray(bytes.byteLength - 16));
  expect(bytes.readUInt32BE(37)).toBe(index);
  return Buffer.concat([decipher.update(bytes.subarray(41, bytes.byteLength - 16)), decipher.final()]);
}

describe("a SessionStore row's sealed text, built by hand", () => {
  it("stwe4: length and an LZ4 block, then sealed, opens; what seal writes is that format, smaller than the text", async () => {
    const bytes = Buffer.from(text);
    expect(
      await opened([handSealed("stwe4:", LZ4_NAME, lz4Body(literalBlock(bytes), bytes.byteLength))]),
    ).toEqual([text]);
    expect(await opened([handSealed("stwe4:", LZ4_NAME, lz4Body(MATCHING_BLOCK, 17))])).toEqual([
      "abcabcabcabcxyzab",
    ]);
    const [, written] = await seal.seal(BOUND_TO, ["{}", text]);
    expect(written).toMatch(/^stwe4:[A-Za-z0-9+/=]+$/);
    // Opened by hand under the stwe4: name: the text's length, little-endian, then the block.
    const plain = handOpened(written!, LZ4_NAME, 1);
    expect(plain.readUInt32LE(0)).toBe(bytes.byteLength);
    // The text repeats itself: the block holds matches, far smaller than the text.
    expect(plain.byteLength).toBeLessThan(bytes.byteLength / 4);
  });

  it("stwe4: an empty text (length 0, a block of one token with no literals) opens", async () => {
    expect(await opened([handSealed("stwe4:", LZ4_NAME, lz4Body(Buffer.from([0]), 0))])).toEqual([""]);
    expect(await opened(await seal.seal(BOUND_TO, [""]))).toEqual([""]);
  });

  it("stwe3: (the third version, its length and DEFLATE) still opens, beside stwe4: texts", async () => {
    const third = handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from(text)));
    const [fourth] = await seal.seal(BOUND_TO, ["{}"]);
    expect(await opened([third, fourth!, third])).toEqual([text, "{}", text]);
  });

  it("stwe3: an empty text (length 0, an empty DEFLATE stream) opens", async () => {
    expect(await opened([handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.alloc(0)))])).toEqual([""]);
  });

  it("stwe2: (the second version, compressed without its length) still opens, beside stwe4: texts", async () => {
    const second = handSealed("stwe2:", DEFLATED_NAME, deflateRawSync(Buffer.from(text)));
    const [fourth] = await seal.seal(BOUND_TO, ["{}"]);
    expect(await opened([second, fourth!, second])).toEqual([text, "{}", text]);
  });

  it("a text of a few MiB (compressed off the event loop) round trips, beside small ones", async () => {
    // Base64 of random bytes: 4 MiB that LZ4 cannot shrink below the size it decompresses from off the loop.
    const large = randomBytes(3 * 1024 * 1024).toString("base64");
    const texts = ["a", large, "", text];
    expect(await opened(await seal.seal(BOUND_TO, texts))).toEqual(texts);
  });

  it("stwe1: (the first version, uncompressed) still opens, beside stwe4: texts in one call", async () => {
    const first = handSealed("stwe1:", UNCOMPRESSED_NAME, Buffer.from(text));
    const [second] = await seal.seal(BOUND_TO, ["{}"]);
    expect(await opened([first, second!, first])).toEqual([text, "{}", text]);
  });

  it.each([
    [
      "a stwe2: text given the stwe1: tag",
      () => `stwe1:${handSealed("stwe2:", DEFLATED_NAME, deflateRawSync(Buffer.from(text))).slice(6)}`,
    ],
    [
      "a stwe1: text given the stwe2: tag",
      () => `stwe2:${handSealed("stwe1:", UNCOMPRESSED_NAME, Buffer.from(text)).slice(6)}`,
    ],
    [
      "a stwe2: text sealed under the stwe1: name",
      () => handSealed("stwe2:", UNCOMPRESSED_NAME, deflateRawSync(Buffer.from(text))),
    ],
    [
      "a stwe2: text for another transcript",
      () => handSealed("stwe2:", `${DEFLATED_NAME}sub`, deflateRawSync(Buffer.from(text))),
    ],
    [
      "a stwe2: text whose sealed bytes are not a DEFLATE stream",
      () => handSealed("stwe2:", DEFLATED_NAME, Buffer.from("not deflate \u00ff\u00fe")),
    ],
    [
      "a stwe2: text given the stwe3: tag",
      () => `stwe3:${handSealed("stwe2:", DEFLATED_NAME, deflateRawSync(Buffer.from(text))).slice(6)}`,
    ],
    [
      "a stwe3: text given the stwe2: tag",
      () => `stwe2:${handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from(text))).slice(6)}`,
    ],
    [
      "a stwe3: text sealed under the stwe2: name",
      () => handSealed("stwe3:", DEFLATED_NAME, sizedBody(Buffer.from(text))),
    ],
    [
      "a stwe3: text recording one byte fewer than it inflates to",
      () => handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from(text), Buffer.byteLength(text) - 1)),
    ],
    [
      "a stwe3: text recording one byte more than it inflates to",
      () => handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from(text), Buffer.byteLength(text) + 1)),
    ],
    [
      "a stwe3: text recording a length of 0 that inflates to a byte",
      () => handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from("x"), 0)),
    ],
    [
      "a stwe3: text recording more than 256 MiB",
      () => handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from(text), 256 * 1024 * 1024 + 1)),
    ],
    [
      "a stwe3: text too short to hold its length",
      () => handSealed("stwe3:", SIZED_NAME, Buffer.from([0, 0, 1])),
    ],
    [
      "a stwe3: text whose bytes after the length are not a DEFLATE stream",
      () =>
        handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from(text), 20, Buffer.from("not deflate \u00ff"))),
    ],
    [
      "a stwe3: text given the stwe4: tag",
      () => `stwe4:${handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from(text))).slice(6)}`,
    ],
    [
      "a stwe4: text given the stwe3: tag",
      () => `stwe3:${handSealed("stwe4:", LZ4_NAME, lz4Body(MATCHING_BLOCK, 17)).slice(6)}`,
    ],
    [
      "a stwe4: text sealed under the stwe3: name",
      () => handSealed("stwe4:", SIZED_NAME, lz4Body(MATCHING_BLOCK, 17)),
    ],
    [
      "a stwe4: text recording one byte fewer than its block holds",
      () => handSealed("stwe4:", LZ4_NAME, lz4Body(MATCHING_BLOCK, 16)),
    ],
    [
      "a stwe4: text recording one byte more than its block holds",
      () => handSealed("stwe4:", LZ4_NAME, lz4Body(MATCHING_BLOCK, 18)),
    ],
    [
      "a stwe4: text recording more than 256 MiB",
      () => handSealed("stwe4:", LZ4_NAME, lz4Body(MATCHING_BLOCK, 256 * 1024 * 1024 + 1)),
    ],
    [
      "a stwe4: text too short to hold its length",
      () => handSealed("stwe4:", LZ4_NAME, Buffer.from([17, 0, 0])),
    ],
    [
      "a stwe4: text whose block's literals run past its end",
      () => handSealed("stwe4:", LZ4_NAME, lz4Body(Buffer.from([0x50, ...Buffer.from("ab")]), 5)),
    ],
    [
      "a stwe4: text whose match reaches back before the text's start",
      () =>
        handSealed(
          "stwe4:",
          LZ4_NAME,
          lz4Body(Buffer.from([0x14, 0x61, 9, 0, 0x50, ...Buffer.from("xyzab")]), 14),
        ),
    ],
    [
      "an unknown version's tag",
      () => `stwe5:${handSealed("stwe4:", LZ4_NAME, lz4Body(MATCHING_BLOCK, 17)).slice(6)}`,
    ],
  ])("%s: INTEGRITY", async (_name, build) => {
    const sealed = build();
    await expectStowageError(seal.open(BOUND_TO, [sealed]), "INTEGRITY", "DECRYPTION_FAILED");
  });

  it("a stwe2: text that inflates past 256 MiB (a DEFLATE bomb, sealed with the key): INTEGRITY, not the memory", async () => {
    const bomb = deflateRawSync(Buffer.alloc(256 * 1024 * 1024 + 1), { level: 1 });
    expect(bomb.byteLength).toBeLessThan(2 * 1024 * 1024);
    const error = await expectStowageError(
      seal.open(BOUND_TO, [handSealed("stwe2:", DEFLATED_NAME, bomb)]),
      "INTEGRITY",
      "DECRYPTION_FAILED",
    );
    expect(error.message).toContain("does not inflate");
  });

  it("a stwe4: text that records 1 KiB and whose block expands to 16 MiB (an LZ4 bomb): INTEGRITY, not the memory", async () => {
    // One literal, then a match 1 back of 16 MiB - 1 bytes (its length in bytes of 255), then five literals.
    const matchLength = 16 * 1024 * 1024 - 1;
    const bomb = Buffer.from([
      0x1f,
      0x61,
      1,
      0,
      ...lengthBytes(matchLength - 4 - 15),
      0x50,
      ...Buffer.from("xyzab"),
    ]);
    expect(bomb.byteLength).toBeLessThan(70_000);
    await expectStowageError(
      seal.open(BOUND_TO, [handSealed("stwe4:", LZ4_NAME, lz4Body(bomb, 1024))]),
      "INTEGRITY",
      "DECRYPTION_FAILED",
    );
    // The same block recording its whole length opens: the bomb is refused for its length alone.
    const [whole] = await seal.open(BOUND_TO, [
      handSealed("stwe4:", LZ4_NAME, lz4Body(bomb, matchLength + 6)),
    ]);
    expect(whole!.byteLength).toBe(matchLength + 6);
  });

  it("a stwe3: text that records a small length and inflates to 16 MiB: INTEGRITY at the recorded length", async () => {
    const bomb = deflateRawSync(Buffer.alloc(16 * 1024 * 1024), { level: 1 });
    const error = await expectStowageError(
      seal.open(BOUND_TO, [handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.alloc(0), 1024, bomb))]),
      "INTEGRITY",
      "DECRYPTION_FAILED",
    );
    expect(error.message).toContain("more than 1024 bytes");
  });

  it("where lz4-napi (a native addon) does not load: sealing and stwe4: texts are UNAVAILABLE, stwe3: texts still open", async () => {
    vi.resetModules();
    vi.doMock("lz4-napi", () => {
      throw new Error("no prebuilt binary for this platform");
    });
    try {
      const { sealSessionStoreRows: sealWithout } = await import(
        "../../src/encryption/sealed-session-store-rows.js"
      );
      const without = sealWithout(keys, { kind: "user", id: "alice" });
      const refused = await expectStowageError(
        without.seal(BOUND_TO, ["{}"]),
        "UNAVAILABLE",
        "CODEC_UNAVAILABLE",
      );
      expect(refused.message).toContain("lz4-napi");
      const third = handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from(text)));
      const opened = await without.open(BOUND_TO, [third]);
      expect(Buffer.from(opened[0]!).toString("utf8")).toBe(text);
      await expectStowageError(
        without.open(BOUND_TO, [handSealed("stwe4:", LZ4_NAME, lz4Body(MATCHING_BLOCK, 17))]),
        "UNAVAILABLE",
        "CODEC_UNAVAILABLE",
      );
    } finally {
      vi.doUnmock("lz4-napi");
      vi.resetModules();
    }
  });
});
