import { assertPrincipal, type Principal, StowageError } from "@stowage/core";
import type { SessionStoreSeal } from "@stowage/sessions";
import { namespaceOf } from "../shared/owner.js";
import type { DataKeys } from "./data-keys.js";
import {
  newHeader,
  objectKeyFor,
  parseHeader,
  SEALED_HEADER_BYTES,
  type SealedHeader,
  segmentOpener,
  segmentSealer,
} from "./sealed-format.js";

// A text of a SessionStore's rows sealed (the PostgreSQL store's batches of entries, and its
// summaries): `stwe1:` then base64 of
//
//   header  the sealed format's header (magic, version, data key id, salt): the `seal` call's
//   index   the text's place in its call (4 bytes, big-endian)
//   segment the text's ciphertext and GCM tag, as the format seals the segment `index`, flagged last
//
// One header, so one HKDF, per `seal` call (an append), not per text: a text sealed with
// `sealBytes` (a fresh salt, an HKDF and a GCM each) cost about 45 µs when the store sealed a row
// an entry. The format's guarantees hold: the key is the call's own (a random salt), each text's
// nonce is its index, unique within the call, and the additional data binds the header, the index
// and the name below (the principal's namespace and the store's `boundTo`), so a text copied to
// another transcript or principal, or given another index, fails its tag (INTEGRITY). An open
// derives each call's key once too (the texts of a page share headers). `open` hands back the
// plaintext's bytes: the store cuts a batch's lines out of them without decoding it whole.
// The tag tells a sealed text from a clear one: JSON text never starts with a letter `s`.

const TAG = "stwe1:";
const INDEX_BYTES = 4;
const TAG_BYTES = 16;

const boundName = (namespace: string, boundTo: string) => `session-store/${namespace}/${boundTo}`;

function integrity(name: string, why: string): StowageError {
  return new StowageError("INTEGRITY", `sealed session store text of ${name} ${why}`, {
    reason: "DECRYPTION_FAILED",
    details: { key: name },
  });
}

/**
 * The seal of `principal`'s SessionStore rows (see `SharedStores.sessionStoreSeal`): under the
 * principal's data key, the scope its namespace's objects are sealed under in the shared store.
 */
export function sealSessionStoreRows(keys: DataKeys, principal: Principal): SessionStoreSeal {
  assertPrincipal(principal);
  const namespace = namespaceOf(principal);
  return {
    async seal(boundTo, texts, options = {}) {
      const name = boundName(namespace, boundTo);
      const dataKey = await keys.current(namespace, options);
      const header = newHeader(dataKey.id);
      const key = objectKeyFor(dataKey.key, header);
      const sealRow = segmentSealer(name);
      // Each row assembled in one scratch buffer (header, index, ciphertext, tag), then encoded:
      // as in `open`, a buffer a row cost more than the AES.
      let scratch = Buffer.alloc(0);
      return texts.map((text, index) => {
        const [ciphertext, tag] = sealRow(key, header, index, true, Buffer.from(text, "utf8"));
        const size = SEALED_HEADER_BYTES + INDEX_BYTES + ciphertext.byteLength + TAG_BYTES;
        if (scratch.byteLength < size) scratch = Buffer.alloc(Math.max(size, 2 * scratch.byteLength));
        scratch.set(header.bytes, 0);
        scratch.writeUInt32BE(index, SEALED_HEADER_BYTES);
        ciphertext.copy(scratch, SEALED_HEADER_BYTES + INDEX_BYTES);
        tag.copy(scratch, size - TAG_BYTES);
        return TAG + scratch.toString("base64", 0, size);
      });
    },

    async open(boundTo, texts, options = {}) {
      const name = boundName(namespace, boundTo);
      const openRow = segmentOpener(name);
      // The key of each batch met, by its header (data key id and salt); rows of a batch are
      // read one after another, so a row's header is compared with the last one's first, and
      // parsed (a copy and a hex id) only when it is another batch's.
      const batchKeys = new Map<string, Promise<Buffer>>();
      let last: { header: SealedHeader; key: Buffer } | undefined;
      const batchOf = async (bytes: Buffer) => {
        const header = parseHeader(bytes.subarray(0, SEALED_HEADER_BYTES + TAG_BYTES), name);
        const id = Buffer.from(header.bytes).toString("hex");
        let key = batchKeys.get(id);
        if (!key) {
          key = keys
            .dataKey(namespace, header.dataKeyId, options)
            .then((dataKey) => objectKeyFor(dataKey, header));
          batchKeys.set(id, key);
        }
        last = { header, key: await key };
        return last;
      };
      const sameBatch = (bytes: Buffer) =>
        last !== undefined &&
        bytes.compare(last.header.bytes, 0, SEALED_HEADER_BYTES, 0, SEALED_HEADER_BYTES) === 0;
      // Each row decoded into one scratch buffer, grown as needed: the decipher copies out what
      // it opens, so the next row may overwrite it (a fresh buffer a row cost more than the AES).
      let scratch = Buffer.alloc(0);
      const opened: Buffer[] = [];
      for (const text of texts) {
        if (!text.startsWith(TAG))
          throw integrity(name, "is not sealed (stored in clear or by another tool)");
        const encoded = text.slice(TAG.length);
        const most = Math.ceil((encoded.length * 3) / 4);
        if (scratch.byteLength < most) scratch = Buffer.alloc(Math.max(most, 2 * scratch.byteLength));
        const bytes = scratch.subarray(0, scratch.write(encoded, "base64"));
        if (bytes.byteLength < SEALED_HEADER_BYTES + INDEX_BYTES + TAG_BYTES)
          throw integrity(name, "is too short to be sealed");
        // Awaited only for another batch's key: an await a row would cost more than its header check.
        const batch = sameBatch(bytes) ? last! : await batchOf(bytes);
        const index = bytes.readUInt32BE(SEALED_HEADER_BYTES);
        const segment = bytes.subarray(SEALED_HEADER_BYTES + INDEX_BYTES);
        opened.push(openRow(batch.key, batch.header, index, true, segment));
      }
      return opened;
    },
  };
}
