import { createCipheriv, hkdfSync, randomBytes } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import type { DataKeys } from "../../src/encryption/data-keys.js";
import { sealSessionStoreRows } from "../../src/encryption/sealed-session-store-rows.js";

// The sealed text of a SessionStore row, built here byte by byte from the format its source
// describes (not by `seal`): `stwe2:` texts hold the UTF-8 bytes compressed with raw DEFLATE,
// `stwe1:` texts (the first version, still read) hold them as they are, each version bound to a
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

const DEFLATED_NAME = `session-store-deflated/user/alice/${BOUND_TO}`;
const UNCOMPRESSED_NAME = `session-store/user/alice/${BOUND_TO}`;
const text = `{"type":"user","message":"${"ünïcødé ✓ ".repeat(500)}"}`;
const opened = async (texts: string[]) =>
  (await seal.open(BOUND_TO, texts)).map((bytes) => Buffer.from(bytes).toString("utf8"));

describe("a SessionStore row's sealed text, built by hand", () => {
  it("stwe2: DEFLATE then sealed opens; what seal writes is that format, smaller than the text", async () => {
    expect(await opened([handSealed("stwe2:", DEFLATED_NAME, deflateRawSync(Buffer.from(text)))])).toEqual([
      text,
    ]);
    const [written] = await seal.seal(BOUND_TO, [text]);
    expect(written).toMatch(/^stwe2:[A-Za-z0-9+/=]+$/);
    // Header (37) + index (4) + tag (16) around a ciphertext as long as the DEFLATE stream.
    expect(Buffer.from(written!.slice(6), "base64").byteLength).toBeLessThan(Buffer.byteLength(text) / 4);
  });

  it("a text of a few MiB (compressed off the event loop) round trips, beside small ones", async () => {
    // Base64 of random bytes: 4 MiB that DEFLATE cannot shrink below the size it inflates from off the loop.
    const large = randomBytes(3 * 1024 * 1024).toString("base64");
    const texts = ["a", large, "", text];
    expect(await opened(await seal.seal(BOUND_TO, texts))).toEqual(texts);
  });

  it("stwe1: (the first version, uncompressed) still opens, beside stwe2: texts in one call", async () => {
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
      "an unknown version's tag",
      () => `stwe3:${handSealed("stwe2:", DEFLATED_NAME, deflateRawSync(Buffer.from(text))).slice(6)}`,
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
});
