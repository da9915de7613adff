import { BLOB_REF_PREFIX, describeValue, StowageError } from "@stowage/core";
import type { SessionStoreSeal } from "@stowage/sessions";
import {
  type SerializedEntry,
  type StoredEntryLine,
  type StoredSessionKey,
  storedEntryLine,
} from "@stowage/sessions/backend";

// The text of a SessionStore's rows, sealed when the store was given a `seal`: an entry row holds
// `<sealed line>` or, when payloads of it moved to the blob store, `<sealed line> blob:sha256:<hex> …`
// (the refs in clear, so that `scanSessionStoreForBlobRefs` finds them without a key, as garbage
// collection needs; a load checks them against the refs inside the sealed line). A summary holds
// its sealed JSON. Keys, uuids, mtimes and ids stay in clear: the statements select and lock by them.
//
// A sealed text never starts as JSON text can (the seal's contract, checked on every seal), so a
// row tells by its first character which it is: a store without a seal refuses a sealed row
// (FORBIDDEN) rather than parse ciphertext, and a store with one refuses a clear row (INTEGRITY:
// turning encryption on is for a new deployment, see the tenancy README).

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

/** The seal's plaintexts checked: one string per sealed text. */
function checkedOpened(opened: unknown, count: number): string[] {
  if (Array.isArray(opened) && opened.length === count && opened.every((text) => typeof text === "string"))
    return opened;
  throw new StowageError(
    "INTERNAL",
    `the session store's seal opened ${count} texts into ${describeValue(opened)}, not one text each`,
    { reason: "SEAL_BROKEN" },
  );
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

/**
 * The text of each row of a batch: its `storedEntryLine`, sealed (one `seal` call for the batch)
 * with the refs of its moved payloads after it, or as it is without a seal.
 */
export async function entryRowTexts(
  seal: SessionStoreSeal | undefined,
  stored: StoredSessionKey,
  serialized: readonly SerializedEntry[],
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const lines = serialized.map(storedEntryLine);
  if (!seal) return lines;
  const sealed = checkedSealed(
    await seal.seal(entriesBoundTo(stored), lines, optionsOf(signal)),
    lines.length,
  );
  for (const [index, entry] of serialized.entries()) {
    if (entry.moved) sealed[index] = `${sealed[index]} ${clearRefsOf(entry.moved)}`;
  }
  return sealed;
}

/** A stored entry row opened: the line `storedEntryLine` wrote, and the refs kept in clear beside it. */
export interface OpenedEntryRow {
  line: string;
  clearRefs: string;
}

/**
 * The lines of a page of entry rows (one `open` call for the page), or FORBIDDEN / INTEGRITY as
 * the file's header says; `where(index)` names a row in errors.
 */
export async function openEntryRows(
  seal: SessionStoreSeal | undefined,
  stored: StoredSessionKey,
  texts: readonly string[],
  where: (index: number) => Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<OpenedEntryRow[]> {
  const sealedParts: string[] = [];
  const clearRefs: string[] = [];
  for (const [index, text] of texts.entries()) {
    if (!seal) {
      if (!isClear(text)) throw sealedWithoutSeal(where(index));
      continue;
    }
    if (isClear(text)) throw notSealed(where(index));
    const space = text.indexOf(" ");
    sealedParts.push(space < 0 ? text : text.slice(0, space));
    clearRefs.push(space < 0 ? "" : text.slice(space + 1));
  }
  if (!seal) return texts.map((line) => ({ line, clearRefs: "" }));
  const lines = checkedOpened(
    await seal.open(entriesBoundTo(stored), sealedParts, optionsOf(signal)),
    sealedParts.length,
  );
  return lines.map((line, index) => ({ line, clearRefs: clearRefs[index]! }));
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
  return checkedOpened(await seal.open(summaryBoundTo(stored), [text], optionsOf(signal)), 1)[0]!;
}
