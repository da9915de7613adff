import { createCipheriv, hkdfSync, randomBytes } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import type { DataKeys } from "../../src/encryption/data-keys.js";
import { sealSessionStoreRows } from "../../src/encryption/sealed-session-store-rows.js";

// The sealed text of a SessionStore row, built here byte by byte from the format its source
// describes (not by `seal`): `stwe3:` texts hold the length of the UTF-8 bytes (4 bytes,
// big-endian) and then the bytes compressed with raw DEFLATE; the earlier versions, still read,
// `stwe2:` the compressed bytes alone and `stwe1:` the bytes as they are; each version bound to a
// name of its own. Data key fixed, so every byte is this file's.
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

/** A sealed text: `tag`, then base64 of header | index | AES-256-GCM(plaintext) | GCM tag. */
function handSealed(tag: string, name: string, plaintext: Uint8Array, index = 0): string {
  const salt = randomBytes(16);
  const header = Buffer.concat([
    Buffer.from("STWE"),
    Buffer.from([1]),
    Buffer.from(DATA_KEY_ID, "hex"),
    salt,
  ]);
  const key = Buffer.from(hkdfSync("sha256", DATA_KEY, salt, Buffer.from("stowage/object-key/v1"), 32));
  const indexBytes = Buffer.alloc(4);
  indexBytes.writeUInt32BE(index);
  const nonce = Buffer.concat([Buffer.alloc(8), indexBytes]);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  // Additional data: the header, the index, "last" (every text is one segment), the name.
  cipher.setAAD(Buffer.concat([header, indexBytes, Buffer.from([1]), Buffer.from(name, "utf8")]));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return tag + Buffer.concat([header, indexBytes, ciphertext, cipher.getAuthTag()]).toString("base64");
}

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
const opened = async (texts: string[]) =>
  (await seal.open(BOUND_TO, texts)).map((bytes) => Buffer.from(bytes).toString("utf8"));

describe("a SessionStore row's sealed text, built by hand", () => {
  it("stwe3: length and DEFLATE, then sealed, opens; what seal writes is that format, smaller than the text", async () => {
    expect(await opened([handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from(text)))])).toEqual([text]);
    const [written] = await seal.seal(BOUND_TO, [text]);
    expect(written).toMatch(/^stwe3:[A-Za-z0-9+/=]+$/);
    // Header (37) + index (4) + tag (16) around a ciphertext of the length (4) and the DEFLATE stream.
    const bytes = Buffer.from(written!.slice(6), "base64");
    expect(bytes.byteLength).toBe(
      37 + 4 + 4 + deflateRawSync(Buffer.from(text), { level: 1 }).byteLength + 16,
    );
    expect(bytes.byteLength).toBeLessThan(Buffer.byteLength(text) / 4);
  });

  it("stwe3: an empty text (length 0, an empty DEFLATE stream) opens", async () => {
    expect(await opened([handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.alloc(0)))])).toEqual([""]);
    expect(await opened(await seal.seal(BOUND_TO, [""]))).toEqual([""]);
  });

  it("stwe2: (the second version, compressed without its length) still opens, beside stwe3: texts", async () => {
    const second = handSealed("stwe2:", DEFLATED_NAME, deflateRawSync(Buffer.from(text)));
    const [third] = await seal.seal(BOUND_TO, ["{}"]);
    expect(await opened([second, third!, second])).toEqual([text, "{}", text]);
  });

  it("a text of a few MiB (compressed off the event loop) round trips, beside small ones", async () => {
    // Base64 of random bytes: 4 MiB that DEFLATE cannot shrink below the size it inflates from off the loop.
    const large = randomBytes(3 * 1024 * 1024).toString("base64");
    const texts = ["a", large, "", text];
    expect(await opened(await seal.seal(BOUND_TO, texts))).toEqual(texts);
  });

  it("stwe1: (the first version, uncompressed) still opens, beside stwe3: texts in one call", async () => {
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
      "an unknown version's tag",
      () => `stwe4:${handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.from(text))).slice(6)}`,
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

  it("a stwe3: text that records a small length and inflates to 16 MiB: INTEGRITY at the recorded length", async () => {
    const bomb = deflateRawSync(Buffer.alloc(16 * 1024 * 1024), { level: 1 });
    const error = await expectStowageError(
      seal.open(BOUND_TO, [handSealed("stwe3:", SIZED_NAME, sizedBody(Buffer.alloc(0), 1024, bomb))]),
      "INTEGRITY",
      "DECRYPTION_FAILED",
    );
    expect(error.message).toContain("more than 1024 bytes");
  });
});
