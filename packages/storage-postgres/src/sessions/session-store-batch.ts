import type { Buffer } from "node:buffer";
import type { SessionStoreEntry, SessionSummaryEntry } from "@stowage/sessions";
import { encodeJsonLines } from "@stowage/sessions/backend";
import { sql } from "drizzle-orm";
import type { StowageDatabase } from "../database.js";

// What both ways of appending a batch share (the transaction of session-store-writes.ts and the
// one statement of session-store-append-ahead.ts): the batch's parameters and rows, and the key
// row a store last wrote.

/** A batch as the append statement takes it: its rows' texts as one UTF-8 parameter, and their uuids. */
export interface BatchParameters {
  lines: Buffer;
  uuids: (string | null)[];
  /** The uuids of the batch's entries, in order (a sealed batch's rows hold batch rows besides). */
  entryUuids: (string | null)[];
}

/**
 * A batch as the append statement takes it: the text of each row (see `entryRows`) written
 * newline-separated (JSON text never holds a raw newline, a sealed text neither) into one UTF-8
 * parameter, which the server splits without parsing it again, and their uuids. The caller drops
 * the strings after this: kept across the statement's round trips they outlived the young
 * generation and were collected by full GCs, which cost more than the rest of the Node side together.
 */
export function batchParameters(
  {
    texts,
    uuids,
    entryUuids,
  }: { texts: readonly string[]; uuids: (string | null)[]; entryUuids: (string | null)[] },
  into: Buffer | undefined,
): BatchParameters {
  return { lines: encodeJsonLines(texts, { finalNewline: false, into }), uuids, entryUuids };
}

export type Executor = Pick<StowageDatabase, "execute">;

/** The batch as rows (`entry`, `uuid`, `position`), split on the server from its two parameters. */
export const batchRows = ({ lines, uuids }: Pick<BatchParameters, "lines" | "uuids">) => sql`
  SELECT line.value AS entry, id.value AS uuid, line.position
  FROM unnest(string_to_array(convert_from(${lines}::bytea, 'UTF8'), E'\n'))
    WITH ORDINALITY AS line(value, position)
  JOIN json_array_elements_text(${JSON.stringify(uuids)}::json) WITH ORDINALITY AS id(value, position)
    USING (position)`;

/** A main transcript's key row as this store last wrote it: the next append can fold ahead of it. */
export interface KnownHead {
  mtime: number;
  /** The summary's text, exactly as stored (sealed when the store seals its rows). */
  summary: string;
  /** The summary's JSON text. */
  text: string;
}

/**
 * The key row a batch leaves: the summary folded from `previous` over `entries` at `mtime`, and
 * its text as stored (sealed when the store seals its rows).
 */
export type NextHead = (
  previous: SessionSummaryEntry | undefined,
  entries: readonly SessionStoreEntry[],
  mtime: number,
) => Promise<KnownHead>;
