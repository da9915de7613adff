import { createHash } from "node:crypto";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createObjectSessionStore } from "../../src/session-store/object-session-store.js";
import type { SessionStoreEntry } from "../../src/session-store/types.js";

// Parts written by hand into the ObjectStore, as the README describes the format: a header line
// `{"stowageSessionPart":2,"keySha256":<hex SHA-256 of the part's own object key>,"counts":[…]}`,
// then one JSON line per entry, each ending in "\n". Nothing here is made by the code under test.

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const name = (first: number, last: number) =>
  `part-${String(first).padStart(12, "0")}-${String(last).padStart(12, "0")}.jsonl`;
const dir = "session-store/-workspace-app/s1/";
const key = { projectKey: "-workspace-app", sessionId: "s1" };
const P = (seq: number) => dir + name(seq, seq);
const R = (first: number, last: number) => dir + name(first, last);

const line = (uuid: string) => JSON.stringify({ type: "user", uuid });
const user = (uuid: string): SessionStoreEntry => ({ type: "user", uuid });
const summary = { sessionId: "s1", mtime: 1, data: { customTitle: "Hand-written" } };

/** A part whose header is bound to `boundTo` (its own key, unless a test says otherwise). */
function part(boundTo: string, counts: number[], lines: string[], header: Record<string, unknown> = {}) {
  const head = JSON.stringify({ stowageSessionPart: 2, keySha256: sha256(boundTo), counts, ...header });
  return Buffer.from([head, ...lines].map((text) => `${text}\n`).join(""));
}
const raw = (text: string) => Buffer.from(text);
/** One payload moved to a blob store, as format 3 records it (README: "Images and documents"). */
const movedOne = { path: ["message", "content", 0, "source", "data"], sha256: "ab".repeat(32), form: "" };
const EMPTY = new Uint8Array(0);

/**
 * A part of format 4 written by hand (README: "Images and documents"): format 3's header plus
 * `held`, the payloads whose bytes follow the entry lines, one after another in the header's order.
 */
function heldPart(boundTo: string, lines: string[], held: Buffer[], header: Record<string, unknown> = {}) {
  const digests = held.map((bytes) => createHash("sha256").update(bytes).digest("hex"));
  const text = part(boundTo, [lines.length], lines, {
    stowageSessionPart: 4,
    moved: { 0: digests.map((digest) => ({ ...movedOne, sha256: digest })) },
    held: digests.map((digest, index) => ({ sha256: digest, size: held[index]!.byteLength })),
    ...header,
  });
  return Buffer.concat([text, ...held]);
}
/** Bytes a hand-written part holds: a PNG's signature and some more. */
const HELD = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(2_000, 0x5a)]);
const HELD_SHA = createHash("sha256").update(HELD).digest("hex");
/** Part 3 of {@link sixEntries} holding {@link HELD}, with `header` over what format 4 says. */
const part3Holding = (header: Record<string, unknown> = {}, held = [HELD]) =>
  heldPart(P(3), [line("e"), line("f")], held, { counts: [2], summary, ...header });
/** Where part 3's held bytes start. */
const heldStart = () => part3Holding().byteLength - HELD.byteLength;

/** Six entries in three parts of two, the last one with a summary. */
const sixEntries = (): Record<string, Uint8Array> => ({
  [P(1)]: part(P(1), [2], [line("a"), line("b")]),
  [P(2)]: part(P(2), [2], [line("c"), line("d")]),
  [P(3)]: part(P(3), [2], [line("e"), line("f")], { summary }),
});
const SIX = ["a", "b", "c", "d", "e", "f"].map(user);

/** Byte offset of line `n` (0: the header) of a part written by hand. */
const offsetOfLine = (bytes: Uint8Array, n: number) => {
  let offset = 0;
  for (let i = 0; i < n; i++) offset = Buffer.from(bytes).indexOf(0x0a, offset) + 1;
  return offset;
};

async function storeWith(objects: Record<string, Uint8Array | null>): Promise<ObjectStore> {
  const store = createMemoryObjectStore();
  for (const [objectKey, bytes] of Object.entries(objects)) if (bytes) await store.put(objectKey, bytes);
  return store;
}

async function snapshot(store: ObjectStore): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const item of store.iterate())
    out[item.key] = Buffer.from((await store.get(item.key))!).toString("base64");
  return out;
}

type Operation = "load" | "append" | "compact" | "summaries";
const ALL: Operation[] = ["load", "append", "compact", "summaries"];
const ENTRIES: Operation[] = ["load", "append", "compact"];

function run(store: ObjectStore, operation: Operation): Promise<unknown> {
  // A new store each time: it knows nothing of the transcript and reads it.
  const sessions = createObjectSessionStore({ store });
  if (operation === "load") return sessions.load(key);
  if (operation === "append") return sessions.append(key, [user("new")]);
  if (operation === "compact") return sessions.compact(key);
  return sessions.listSessionSummaries(key.projectKey);
}

interface Refused {
  why: string;
  objects: () => Record<string, Uint8Array | null>;
  reason: "MISSING_PART" | "CORRUPT_PART" | "FOREIGN_PART" | "UNSUPPORTED_PART_FORMAT";
  details: () => Record<string, unknown>;
  operations: Operation[];
}

const withPart2Line = (second: string) => part(P(2), [2], [line("c"), second]);

const REFUSED: Refused[] = [
  {
    why: "a zero-byte part that no range covers (load returned 4 of 6 entries)",
    objects: () => ({ ...sixEntries(), [P(2)]: EMPTY }),
    reason: "MISSING_PART",
    details: () => ({ key: P(2), first: 2, last: 2 }),
    operations: ALL,
  },
  {
    why: "a part missing between two others",
    objects: () => ({ ...sixEntries(), [P(2)]: null }),
    reason: "MISSING_PART",
    details: () => ({ key: dir, first: 2, last: 2 }),
    operations: ALL,
  },
  {
    why: "a zero-byte last part (a summary would be taken from the part before)",
    objects: () => ({ ...sixEntries(), [P(3)]: EMPTY }),
    reason: "MISSING_PART",
    details: () => ({ key: P(3), first: 3, last: 3 }),
    operations: ALL,
  },
  {
    why: "only zero-byte parts (load returned null)",
    objects: () => ({ [P(1)]: EMPTY, [P(2)]: EMPTY, [P(3)]: EMPTY }),
    reason: "MISSING_PART",
    details: () => ({ key: P(1), first: 1, last: 1 }),
    operations: ALL,
  },
  {
    why: "a zero-byte part beside a range that does not cover it",
    objects: () => ({
      [P(1)]: EMPTY,
      [R(1, 2)]: part(R(1, 2), [2, 2], ["a", "b", "c", "d"].map(line)),
      [P(2)]: EMPTY,
      [P(3)]: EMPTY,
    }),
    reason: "MISSING_PART",
    details: () => ({ key: P(3), first: 3, last: 3 }),
    operations: ALL,
  },
  ...[
    ["not JSON", '{"type":"user",'],
    ["a number", "42"],
    ["null", "null"],
    ["an array", '[{"type":"user"}]'],
    ["a string", '"user"'],
    ["an object without a type", '{"uuid":"x"}'],
    ["a type that is not a string", '{"type":5}'],
    ["an empty uuid", '{"type":"user","uuid":""}'],
    ["a uuid that is not a string", '{"type":"user","uuid":7}'],
    ["a uuid with NUL", '{"type":"user","uuid":"a\\u0000b"}'],
    ["a uuid with a lone surrogate", '{"type":"user","uuid":"\\ud800"}'],
  ].map(
    ([what, text]): Refused => ({
      why: `a stored entry line that is ${what}`,
      objects: () => ({ ...sixEntries(), [P(2)]: withPart2Line(text!) }),
      reason: "CORRUPT_PART",
      details: () => ({ key: P(2), offset: offsetOfLine(withPart2Line(text!), 2) }),
      operations: ENTRIES,
    }),
  ),
  {
    why: "a header that is not JSON",
    objects: () => ({
      ...sixEntries(),
      [P(3)]: raw(`{"stowageSessionPart":2,\n${line("e")}\n${line("f")}\n`),
    }),
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ALL,
  },
  {
    why: "a header that is JSON but not an object",
    objects: () => ({ ...sixEntries(), [P(3)]: raw(`null\n${line("e")}\n${line("f")}\n`) }),
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ALL,
  },
  {
    why: "a header of format 1, bound to no key",
    objects: () => ({
      ...sixEntries(),
      [P(3)]: raw(`{"stowageSessionPart":1,"counts":[2]}\n${line("e")}\n${line("f")}\n`),
    }),
    reason: "UNSUPPORTED_PART_FORMAT",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ALL,
  },
  {
    why: "a header of format 2 without its key digest",
    objects: () => ({
      ...sixEntries(),
      [P(3)]: raw(`{"stowageSessionPart":2,"counts":[2]}\n${line("e")}\n${line("f")}\n`),
    }),
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ALL,
  },
  {
    why: "a part of another session of the project, copied with its span",
    objects: () => ({
      ...sixEntries(),
      [P(3)]: part(`session-store/-workspace-app/s2/${name(3, 3)}`, [2], [line("e"), line("f")]),
    }),
    reason: "FOREIGN_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ALL,
  },
  {
    why: "a part of this session copied to another span",
    objects: () => ({ ...sixEntries(), [P(3)]: sixEntries()[P(1)]! }),
    reason: "FOREIGN_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ALL,
  },
  {
    why: "the same session's part under another prefix (another tenant's store)",
    objects: () => ({
      ...sixEntries(),
      [P(3)]: part(`tenants/other/-workspace-app/s1/${name(3, 3)}`, [2], [line("e"), line("f")]),
    }),
    reason: "FOREIGN_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ALL,
  },
  {
    why: "a subagent transcript's part in the main transcript",
    objects: () => ({
      ...sixEntries(),
      [P(3)]: part(`${dir}subagents/agent-1/${name(3, 3)}`, [2], [line("e"), line("f")]),
    }),
    reason: "FOREIGN_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ALL,
  },
  {
    why: "a header whose summary is not a summary",
    objects: () => ({ ...sixEntries(), [P(3)]: part(P(3), [2], [line("e"), line("f")], { summary: 5 }) }),
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ALL,
  },
  {
    why: "a header whose counts are not of its span",
    objects: () => ({ ...sixEntries(), [P(3)]: part(P(3), [1, 1], [line("e"), line("f")]) }),
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ALL,
  },
  {
    why: "a header that counts more entries than the part holds",
    objects: () => ({ ...sixEntries(), [P(3)]: part(P(3), [3], [line("e"), line("f")]) }),
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ENTRIES,
  },
  ...[
    ["format 3 without moved payloads", 3, undefined],
    ["format 2 with moved payloads", 2, { 0: [movedOne] }],
    ["moved payloads of a line the part does not hold", 3, { 2: [movedOne] }],
    ["moved payloads of a line named other than by its index", 3, { "01": [movedOne] }],
    ["moved payloads that are a list", 3, [[movedOne]]],
    ["an empty list of moved payloads", 3, { 0: [] }],
    ["a moved payload without its SHA-256", 3, { 0: [{ ...movedOne, sha256: "x" }] }],
    ["a moved payload of no base64 form", 3, { 0: [{ ...movedOne, form: "hex" }] }],
    ["a moved payload without a path", 3, { 0: [{ ...movedOne, path: [] }] }],
  ].map(
    ([what, format, moved]): Refused => ({
      why: `a header of ${what}`,
      objects: () => ({
        ...sixEntries(),
        [P(3)]: part(P(3), [2], [line("e"), line("f")], { stowageSessionPart: format, moved }),
      }),
      reason: "CORRUPT_PART",
      details: () => ({ key: P(3), offset: 0 }),
      operations: ALL,
    }),
  ),
  ...[
    ["format 4 without held payloads", { held: undefined }],
    ["format 3 with held payloads", { stowageSessionPart: 3 }],
    ["held payloads that are not a list", { held: { 0: { sha256: HELD_SHA, size: HELD.byteLength } } }],
    ["an empty list of held payloads", { held: [] }],
    ["a held payload without its SHA-256", { held: [{ sha256: "x", size: HELD.byteLength }] }],
    ["a held payload of size 0", { held: [{ sha256: HELD_SHA, size: 0 }] }],
    ["a held payload of a size that is not an integer", { held: [{ sha256: HELD_SHA, size: 1.5 }] }],
    ["a held payload of a size that is a string", { held: [{ sha256: HELD_SHA, size: "2008" }] }],
    [
      "a held payload none of its lines refers to",
      { held: [{ sha256: "cd".repeat(32), size: HELD.byteLength }] },
    ],
    [
      "the same payload held twice",
      {
        held: [
          { sha256: HELD_SHA, size: 154 },
          { sha256: HELD_SHA, size: 154 },
        ],
      },
    ],
  ].map(
    ([what, header]): Refused => ({
      why: `a header of ${what}`,
      objects: () => ({ ...sixEntries(), [P(3)]: part3Holding(header as Record<string, unknown>) }),
      reason: "CORRUPT_PART",
      details: () => ({ key: P(3), offset: 0 }),
      operations: ALL,
    }),
  ),
  {
    why: "held bytes that hash otherwise (one bit flipped)",
    objects: () => {
      const bytes = part3Holding();
      bytes[bytes.byteLength - 1]! ^= 1;
      return { ...sixEntries(), [P(3)]: bytes };
    },
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: heldStart() }),
    operations: ENTRIES,
  },
  {
    why: "held bytes cut short (the lines no longer end where the sizes say)",
    objects: () => ({ ...sixEntries(), [P(3)]: part3Holding().subarray(0, -1) }),
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: heldStart() - 1 }),
    operations: ENTRIES,
  },
  {
    why: "a byte after the held bytes",
    objects: () => ({ ...sixEntries(), [P(3)]: Buffer.concat([part3Holding(), Buffer.from("x")]) }),
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: heldStart() + 1 }),
    operations: ENTRIES,
  },
  {
    why: "held sizes larger than the part",
    objects: () => ({
      ...sixEntries(),
      [P(3)]: part3Holding({ held: [{ sha256: HELD_SHA, size: 1_000_000 }] }),
    }),
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: 0 }),
    operations: ENTRIES,
  },
  {
    why: "a cut part (no final newline)",
    objects: () => ({ ...sixEntries(), [P(3)]: sixEntries()[P(3)]!.subarray(0, -1) }),
    reason: "CORRUPT_PART",
    details: () => ({ key: P(3), offset: sixEntries()[P(3)]!.byteLength - 1 }),
    operations: ENTRIES,
  },
];

describe("stored parts written by hand: corrupt, foreign and missing parts are INTEGRITY on every read", () => {
  for (const refused of REFUSED) {
    for (const operation of refused.operations) {
      it(`${operation}: ${refused.why} → ${refused.reason}`, async () => {
        const store = await storeWith(refused.objects());
        const before = await snapshot(store);
        const err = await expectStowageError(run(store, operation), "INTEGRITY", refused.reason);
        expect(err.details).toEqual(refused.details());
        // Nothing is written on top of what cannot be read: no new part, no range, no tombstone.
        expect(await snapshot(store)).toEqual(before);
      });
    }
  }
});

describe("stored parts written by hand: what the format allows is read", () => {
  it("parts as the README describes them: loaded, summarized, appended to and compacted", async () => {
    const store = await storeWith(sixEntries());
    const sessions = createObjectSessionStore({ store });
    expect(await sessions.load(key)).toEqual(SIX);
    const [listed] = await sessions.listSessionSummaries(key.projectKey);
    expect(listed?.data).toEqual(summary.data);
    await sessions.append(key, [user("g")]);
    const fourth = Buffer.from((await store.get(P(4)))!).toString("utf8");
    expect(JSON.parse(fourth.split("\n")[0]!)).toMatchObject({
      stowageSessionPart: 2,
      keySha256: sha256(P(4)),
      counts: [1],
    });
    await sessions.compact(key);
    const range = Buffer.from((await store.get(R(1, 4)))!)
      .toString("utf8")
      .split("\n");
    expect(JSON.parse(range[0]!)).toMatchObject({ keySha256: sha256(R(1, 4)), counts: [2, 2, 2, 1] });
    expect(range.slice(1)).toEqual([...["a", "b", "c", "d", "e", "f", "g"].map(line), ""]);
    expect(await createObjectSessionStore({ store }).load(key)).toEqual([...SIX, user("g")]);
  });

  it("a part of format 3: its moved payloads are read from the blob store and put back where the header says", async () => {
    // A PNG's first bytes and some more, written and hashed by hand.
    const bytes = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(2_000, 0x5a)]);
    const base64 = bytes.toString("base64");
    const digest = createHash("sha256").update(bytes).digest("hex");
    const ref = `blob:sha256:${digest}`;
    const moved = {
      0: [
        { path: ["message", "content", 0, "source", "data"], sha256: digest, form: "" },
        { path: ["toolUseResult", "file", "base64"], sha256: digest, form: "wrap:76 final" },
      ],
    };
    const stored = {
      type: "user",
      uuid: "img",
      message: {
        content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: ref } }],
      },
      toolUseResult: { file: { base64: ref } },
    };
    const store = await storeWith({
      ...sixEntries(),
      [P(4)]: part(P(4), [1], [JSON.stringify(stored)], { stowageSessionPart: 3, moved }),
    });
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    await blobs.put(bytes);
    const wrapped = `${(base64.match(/.{1,76}/g) ?? []).join("\n")}\n`;
    const expected = {
      type: "user",
      uuid: "img",
      message: {
        content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: base64 } }],
      },
      toolUseResult: { file: { base64: wrapped } },
    };
    const loaded = await createObjectSessionStore({ store, blobs }).load(key);
    expect(JSON.stringify(loaded)).toBe(JSON.stringify([...SIX, expected]));
    // A store given no blob store cannot put them back: it says so rather than return refs.
    await expectStowageError(createObjectSessionStore({ store }).load(key), "UNAVAILABLE", "NO_BLOB_STORE");
  });

  it("a part of format 4: the bytes it holds are put back, for its lines and a later part's, with no blob store", async () => {
    const ref = `blob:sha256:${HELD_SHA}`;
    const base64 = HELD.toString("base64");
    const withRef = (uuid: string) =>
      JSON.stringify({
        type: "user",
        uuid,
        message: {
          content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: ref } }],
        },
      });
    const withImage = (uuid: string): SessionStoreEntry => ({
      type: "user",
      uuid,
      message: {
        content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: base64 } }],
      },
    });
    const laterMoved = { 0: [{ ...movedOne, sha256: HELD_SHA }] };
    const store = await storeWith({
      ...sixEntries(),
      [P(4)]: heldPart(P(4), [withRef("img")], [HELD]),
      // Part 5 refers to the bytes part 4 holds: format 3, refs alone.
      [P(5)]: part(P(5), [1], [withRef("again")], { stowageSessionPart: 3, moved: laterMoved }),
    });
    const expected = [...SIX, withImage("img"), withImage("again")];
    expect(await createObjectSessionStore({ store }).load(key)).toEqual(expected);

    // A new store appending the same image learns from part 4 that it is held: part 6 holds nothing.
    const objects = createMemoryObjectStore();
    const blobs = createBlobStore({ store: objects });
    const sessions = createObjectSessionStore({ store, blobs });
    await sessions.append(key, [withImage("third")]);
    const sixth = Buffer.from((await store.get(P(6)))!).toString("utf8");
    expect(JSON.parse(sixth.split("\n")[0]!)).toMatchObject({ stowageSessionPart: 3 });
    // Compacted, the bytes move to the blob store and the range holds refs only.
    await sessions.compact(key);
    const range = Buffer.from((await store.get(R(1, 6)))!).toString("utf8");
    expect(JSON.parse(range.split("\n")[0]!)).toMatchObject({ stowageSessionPart: 3 });
    expect(range.endsWith("\n")).toBe(true);
    expect(Buffer.from((await blobs.get(HELD_SHA))!).equals(HELD)).toBe(true);
    expect(await sessions.load(key)).toEqual([...expected, withImage("third")]);
  });

  it("zero-byte parts inside a range are a compaction's leftovers", async () => {
    const store = await storeWith({
      [P(1)]: EMPTY,
      [R(1, 3)]: part(R(1, 3), [2, 2, 2], ["a", "b", "c", "d", "e", "f"].map(line)),
      [P(2)]: EMPTY,
      [P(3)]: EMPTY,
      [P(4)]: part(P(4), [1], [line("g")]),
    });
    expect(await createObjectSessionStore({ store }).load(key)).toEqual([...SIX, user("g")]);
  });

  it("a range that overlaps the one before it only partly: its header's counts say which lines to skip", async () => {
    const store = await storeWith({
      [R(1, 2)]: part(R(1, 2), [2, 2], ["a", "b", "c", "d"].map(line)),
      [P(1)]: EMPTY,
      [P(2)]: EMPTY,
      [R(2, 3)]: part(R(2, 3), [2, 2], ["c", "d", "e", "f"].map(line)),
      [P(3)]: EMPTY,
    });
    expect(await createObjectSessionStore({ store }).load(key)).toEqual(SIX);
  });

  it("a transcript whose first parts are gone is read from its first part (what a delete racing a writer in another process leaves)", async () => {
    const store = await storeWith({ [P(3)]: sixEntries()[P(3)]! });
    expect(await createObjectSessionStore({ store }).load(key)).toEqual([user("e"), user("f")]);
  });
});
