import { randomBytes } from "node:crypto";
import { BLOB_REF_PREFIX, describeValue, StowageError } from "@stowage/core";
import type { SessionStoreSeal } from "@stowage/sessions";
import {
  encodeJsonLines,
  type SerializedEntry,
  type StoredEntryLine,
  type StoredSessionKey,
  storedEntryLine,
} from "@stowage/sessions/backend";

// The text of a SessionStore's rows, sealed when the store was given a `seal`. An append's batch
// is sealed as one text (one `seal` call, one cipher over the batch) in a row of its own, ahead of
// the batch's entry rows:
//
//   batch row  `@<batch id>:<sealed>`, uuid NULL; what is sealed is the batch id, then each entry's
//              `storedEntryLine`, newline-separated (JSON text never holds a raw newline)
//   entry row  `#<batch id>.<index>`, then ` blob:sha256:<hex> …` when payloads of the entry moved
//              to the blob store (the refs in clear, so that `scanSessionStoreForBlobRefs` finds
//              them without a key, as garbage collection needs; a load checks them against the
//              refs inside the sealed line)
//
// Why a batch and not a row: sealed a row each (a cipher, a tag and a base64 text a row, each
// text past PostgreSQL's 2 KB stored out of line), a load took 1.7 to 2.1 times its time in clear;
// see the storage-postgres README for the bench. A load reads the rows in id order: an entry row
// follows its batch row, indexes rising. An index may be missing, as a retried batch stores only
// the entries not stored before (they stay in the earlier batch), and a batch row may have no
// entry after it (a retry whose every entry was stored); the batch row, with no uuid, is stored
// whatever the unique index says of the entries. The batch id, sealed with the batch and named
// by each entry row, ties an entry row to its batch: one moved to another transcript names a
// batch that does not precede it there. A summary holds its sealed JSON. Keys, uuids, mtimes and
// ids stay in clear: the statements select and lock by them.
//
// A sealed text never starts as JSON text can (the seal's contract, checked on every seal), so a
// row tells by its first character which it is: a store without a seal refuses a sealed row
// (FORBIDDEN) rather than parse ciphertext, and a store with one refuses a clear row (INTEGRITY:
// turning encryption on is for a new deployment, see the tenancy README).

const BATCH_ROW = "@";
const ENTRY_ROW = "#";
/** A batch id: 9 random bytes in base64url. */
const BATCH_ID = /^[A-Za-z0-9_-]{12}$/;
/** An entry row's index in its batch: a decimal number without leading zeros. */
const ENTRY_INDEX = /^(?:0|[1-9][0-9]{0,8})$/;
const NEWLINE = 0x0a;

/** What an entry row's seal is bound to: its transcript (project keys and session ids hold no `/`). */
const entriesBoundTo = (stored: StoredSessionKey) =>
  `entries/${stored.projectKey}/${stored.sessionId}/${stored.subpath}`;

/** What a summary's seal is bound to: its main transcript's summary, never an entry's text. */
const summaryBoundTo = (stored: Pick<StoredSessionKey, "projectKey" | "sessionId">) =>
  `summary/${stored.projectKey}/${stored.sessionId}`;

/** Whether `text` starts as JSON text can (a value, or whitespace before one), or is empty: not sealed. */
const isClear = (text: string) => text === "" || /^[\s{["\-0-9tfn]/.test(text);

const optionsOf = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

/** The seal option checked: undefined, or an object with `seal` and `open`. */
export function sessionStoreSealFrom(seal: unknown, factory: string): SessionStoreSeal | undefined {
  if (seal === undefined) return undefined;
  const given = seal as Partial<SessionStoreSeal> | null;
  if (typeof given?.seal !== "function" || typeof given.open !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `${factory}: seal must be a SessionStoreSeal (an object with seal and open, such as @stowage/tenancy's sessionStoreSeal(principal)), got ${describeValue(seal)}`,
    );
  }
  return given as SessionStoreSeal;
}

function sealBroken(what: string): StowageError {
  return new StowageError(
    "INTERNAL",
    `the session store's seal returned what it must not (one non-empty text per input, no whitespace, not starting as JSON text can): ${what}`,
    { reason: "SEAL_BROKEN" },
  );
}

/** The seal's answer checked: one text per input, none that a reader would take as clear or split. */
function checkedSealed(sealed: unknown, count: number): string[] {
  if (!Array.isArray(sealed) || sealed.length !== count)
    throw sealBroken(`${count} texts, got ${describeValue(sealed)}`);
  const bad = sealed.findIndex((text) => typeof text !== "string" || isClear(text) || /\s/.test(text));
  if (bad >= 0) throw sealBroken(describeValue(sealed[bad]));
  return sealed;
}

/** The seal's plaintexts checked: UTF-8 bytes, one per sealed text, as a Buffer each. */
function checkedOpened(opened: unknown, count: number): Buffer[] {
  if (
    Array.isArray(opened) &&
    opened.length === count &&
    opened.every((bytes) => bytes instanceof Uint8Array)
  )
    return opened.map((bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  throw new StowageError(
    "INTERNAL",
    `the session store's seal opened ${count} texts into ${describeValue(opened)}, not the bytes of each`,
    { reason: "SEAL_BROKEN" },
  );
}

function corruptRow(where: Record<string, unknown>, why: string): StowageError {
  return new StowageError("INTEGRITY", `session store row ${JSON.stringify(where)} ${why}`, {
    reason: "CORRUPT_ROW",
    details: where,
  });
}

function notSealed(where: Record<string, unknown>): StowageError {
  return new StowageError(
    "INTEGRITY",
    `session store row ${JSON.stringify(where)} is stored in clear, and this store seals its rows (turning encryption on is for a new database)`,
    { reason: "ROW_NOT_SEALED", details: where },
  );
}

function sealedWithoutSeal(where: Record<string, unknown>): StowageError {
  return new StowageError(
    "FORBIDDEN",
    `session store row ${JSON.stringify(where)} is sealed (encrypted at rest), and this store was given no seal (pass seal, e.g. stowage.sessionStoreSeal(principal))`,
    { reason: "ROW_SEALED", details: where },
  );
}

/** The refs of an entry's moved payloads, once each, as its row keeps them in clear. */
function clearRefsOf(moved: StoredEntryLine["moved"]): string {
  if (!moved) return "";
  return [...new Set(moved.map((payload) => `${BLOB_REF_PREFIX}${payload.sha256}`))].join(" ");
}

/** An append's rows as it stores them: their texts and their uuids, and the uuids of its entries alone. */
export interface EntryRows {
  texts: string[];
  uuids: (string | null)[];
  /** In entry order; without a seal, `uuids` itself (every row is an entry's). */
  entryUuids: (string | null)[];
}

/**
 * Most UTF-16 code units of entry lines one batch row seals (an entry longer than that is a batch
 * of its own). A load's driver decodes each row's text into a string, and V8 places a string over
 * 128 KiB outside its young generation: batch rows of a whole append of 100 entries (270 KB of
 * text, uncompressed then) made a load spend about as long decoding them as on the rest of its
 * text together. Compressed by tenancy's seal, a row's base64 is about 0.46 times its lines' bytes
 * (LZ4 on the tenancy bench's entries; 0.37 with the DEFLATE it used until 2026-12-04), so 128 Ki
 * characters of one-byte text keep it near 64 KB. Against 64 Ki (2026-12-04, each case in its own
 * process, a full GC first, on a slow machine): the server's sealed load 1.52x and 1.66x the clear
 * one against 1.53x and 1.63x, the append 0.77x both against 0.80x and 0.86x; PGlite's the same
 * within the spread. Fewer texts a load means fewer decompressors and deciphers set up.
 */
const BATCH_LINES_LENGTH = 128 * 1024;

/**
 * An append's rows: without a seal, each entry's `storedEntryLine`; with one, its entries cut into
 * batches of at most BATCH_LINES_LENGTH, each a batch row and then a row an entry, as the file's
 * header says, all sealed with one `seal` call.
 */
export async function entryRows(
  seal: SessionStoreSeal | undefined,
  stored: StoredSessionKey,
  serialized: readonly SerializedEntry[],
  signal: AbortSignal | undefined,
): Promise<EntryRows> {
  const entryUuids = serialized.map((entry) => entry.uuid);
  if (!seal) return { texts: serialized.map(storedEntryLine), uuids: entryUuids, entryUuids };
  const batches: { id: string; entries: SerializedEntry[]; lines: string[] }[] = [];
  let length = Number.POSITIVE_INFINITY;
  for (const entry of serialized) {
    const line = storedEntryLine(entry);
    if (length + line.length > BATCH_LINES_LENGTH) {
      batches.push({ id: randomBytes(9).toString("base64url"), entries: [], lines: [] });
      length = 0;
    }
    const batch = batches.at(-1)!;
    batch.entries.push(entry);
    batch.lines.push(line);
    length += line.length + 1;
  }
  const sealed = checkedSealed(
    await seal.seal(
      entriesBoundTo(stored),
      // As UTF-8 bytes written line by line, never one string of the whole batch, which V8
      // would allocate outside its young generation once over 128 KiB (64 Ki characters of
      // two-byte text): that doubled a sealed append's CPU.
      batches.map(({ id, lines }) => encodeJsonLines([id, ...lines], { finalNewline: false })),
      optionsOf(signal),
    ),
    batches.length,
  );
  const rows: EntryRows = { texts: [], uuids: [], entryUuids };
  for (const [at, { id, entries }] of batches.entries()) {
    rows.texts.push(`${BATCH_ROW}${id}:${sealed[at]}`);
    rows.uuids.push(null);
    for (const [index, entry] of entries.entries()) {
      const refs = clearRefsOf(entry.moved);
      rows.texts.push(`${ENTRY_ROW}${id}.${index}${refs === "" ? "" : ` ${refs}`}`);
      rows.uuids.push(entry.uuid);
    }
  }
  return rows;
}

/** An entry row opened: the line `storedEntryLine` wrote, the refs kept in clear beside it, and which row of the page it is. */
export interface OpenedEntryRow {
  line: string;
  clearRefs: string;
  row: number;
}

/** Opens a transcript's rows a page at a time, in id order (see `entryRowOpener`). */
export interface EntryRowOpener {
  /**
   * The entries of the next rows of the transcript (a batch row gives none), or FORBIDDEN /
   * INTEGRITY as the file's header says; `where(index)` names row `index` of `texts` in errors.
   */
  open(
    texts: readonly string[],
    where: (index: number) => Record<string, unknown>,
  ): Promise<OpenedEntryRow[]>;
}

/** A batch row opened: its id, its plaintext, where each entry's line starts in it, and the last index read. */
interface OpenedBatch {
  id: string;
  plain: Buffer;
  starts: number[];
  last: number;
}

/**
 * A load's opener of one transcript's rows: pages are given in id order, and each is opened after
 * the one before (an entry row may follow its batch row on an earlier page), with one `open` of
 * the seal for the page's batch rows.
 */
export function entryRowOpener(
  seal: SessionStoreSeal | undefined,
  stored: StoredSessionKey,
  signal: AbortSignal | undefined,
): EntryRowOpener {
  if (!seal) {
    return {
      open: async (texts, where) =>
        texts.map((line, row) => {
          if (!isClear(line)) throw sealedWithoutSeal(where(row));
          return { line, clearRefs: "", row };
        }),
    };
  }
  const boundTo = entriesBoundTo(stored);
  let batch: OpenedBatch | undefined;

  const openPage = async (texts: readonly string[], where: (index: number) => Record<string, unknown>) => {
    const sealed: string[] = [];
    for (const [row, text] of texts.entries()) {
      if (isClear(text)) throw notSealed(where(row));
      if (text[0] === BATCH_ROW) sealed.push(text.slice(text.indexOf(":") + 1));
    }
    const plains =
      sealed.length === 0
        ? []
        : checkedOpened(await seal.open(boundTo, sealed, optionsOf(signal)), sealed.length);
    let next = 0;
    const opened: OpenedEntryRow[] = [];
    for (const [row, text] of texts.entries()) {
      if (text[0] === BATCH_ROW) batch = batchOf(text, plains[next++]!, where(row));
      else if (text[0] === ENTRY_ROW) opened.push(entryOf(text, row, where(row)));
      else throw corruptRow(where(row), "is neither a batch nor an entry row of a sealed transcript");
    }
    return opened;
  };

  const batchOf = (text: string, plain: Buffer, where: Record<string, unknown>): OpenedBatch => {
    const id = text.slice(1, text.indexOf(":"));
    const first = plain.indexOf(NEWLINE);
    if (!BATCH_ID.test(id) || first < 0 || plain.toString("latin1", 0, first) !== id)
      throw corruptRow(where, "is a batch row whose sealed text does not begin with its batch id");
    const starts: number[] = [];
    for (let at = first + 1; at > 0; at = plain.indexOf(NEWLINE, at) + 1) starts.push(at);
    return { id, plain, starts, last: -1 };
  };

  const entryOf = (text: string, row: number, where: Record<string, unknown>): OpenedEntryRow => {
    const space = text.indexOf(" ");
    const name = space < 0 ? text : text.slice(0, space);
    const dot = name.indexOf(".");
    const id = name.slice(1, dot);
    const indexText = name.slice(dot + 1);
    if (dot < 0 || !ENTRY_INDEX.test(indexText))
      throw corruptRow(where, "is not an entry row (`#<batch id>.<index>`)");
    const index = Number(indexText);
    if (!batch || batch.id !== id)
      throw corruptRow(where, "names a batch whose row does not precede it in this transcript");
    if (index <= batch.last || index >= batch.starts.length)
      throw corruptRow(
        where,
        `names entry ${index} of its batch, which holds ${batch.starts.length} and was read up to ${batch.last}`,
      );
    batch.last = index;
    const end = index + 1 < batch.starts.length ? batch.starts[index + 1]! - 1 : batch.plain.byteLength;
    const line = batch.plain.toString("utf8", batch.starts[index]!, end);
    return { line, clearRefs: space < 0 ? "" : text.slice(space + 1), row };
  };

  // Each page waits for the one before: a page's entries may belong to a batch opened there.
  let previous: Promise<unknown> = Promise.resolve();
  return {
    open(texts, where) {
      const opened = previous.then(() => openPage(texts, where));
      previous = opened.catch(() => {});
      return opened;
    },
  };
}

/**
 * INTEGRITY unless a row's refs in clear are exactly those of its sealed line's moved payloads:
 * garbage collection keeps blobs by the refs in clear, so refs changed there would let it delete
 * a blob the transcript needs, or keep one it does not.
 */
export function checkClearRefs(
  moved: StoredEntryLine["moved"],
  clearRefs: string,
  sealed: boolean,
  where: Record<string, unknown>,
): void {
  if (!sealed || clearRefsOf(moved) === clearRefs) return;
  throw new StowageError(
    "INTEGRITY",
    `session store row ${JSON.stringify(where)} names blob refs in clear that its sealed entry does not hold`,
    { reason: "CORRUPT_ROW", details: where },
  );
}

/** A main transcript's summary (JSON text) as its key row keeps it. */
export async function summaryRowText(
  seal: SessionStoreSeal | undefined,
  stored: StoredSessionKey,
  summary: string,
  signal: AbortSignal | undefined,
): Promise<string> {
  if (!seal) return summary;
  return checkedSealed(await seal.seal(summaryBoundTo(stored), [summary], optionsOf(signal)), 1)[0]!;
}

/** The JSON text of a key row's summary, or FORBIDDEN / INTEGRITY as the file's header says. */
export async function openSummaryRow(
  seal: SessionStoreSeal | undefined,
  stored: Pick<StoredSessionKey, "projectKey" | "sessionId">,
  text: string,
  signal: AbortSignal | undefined,
): Promise<string> {
  const where = { key: `${stored.projectKey}/${stored.sessionId}`, column: "summary" };
  if (!seal) {
    if (!isClear(text)) throw sealedWithoutSeal(where);
    return text;
  }
  if (isClear(text)) throw notSealed(where);
  return checkedOpened(await seal.open(summaryBoundTo(stored), [text], optionsOf(signal)), 1)[0]!.toString(
    "utf8",
  );
}
