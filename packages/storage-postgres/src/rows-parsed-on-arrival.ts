import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { StowageDatabase } from "./database.js";

// node-postgres gives each row to the query's type parsers as the row arrives, so the texts of a
// long result can be parsed while the rest is still on the wire (the server producing it on the
// other core) and each text dies young. drizzle's `execute` sets its own parsers and keeps every
// text until the last row is in, which for 50,000 transcript entries (226 MB of text) meant
// seconds of garbage collection. PGlite hands back a result whole: it has no such path.

/** node-postgres's OIDs of the types these statements parse themselves. */
export const TEXT_OID = 25;
export const INT8_OID = 20;

/** The part of a node-postgres pool this needs: a query with per-query type parsers. */
export interface NodePostgresQueryable {
  query(config: {
    text: string;
    values: unknown[];
    types: { getTypeParser(oid: number): (text: string) => unknown };
  }): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * Runs one statement, each column whose type has a parser in `parsers` handed to it as its row
 * arrives, the columns of a row in their order (every other column stays the text the server
 * sent). A parser must not throw: it returns, or keeps, what went wrong.
 */
export type QueryParsedOnArrival = (
  query: SQL,
  parsers: Record<number, (text: string) => unknown>,
) => Promise<Record<string, unknown>[]>;

const runners = new WeakMap<StowageDatabase, QueryParsedOnArrival>();

const keepText = (text: string) => text;

/** Records that `db` (made by `connectPostgres`) runs on `pool`, for statements parsed on arrival. */
export function registerParsedOnArrival(db: StowageDatabase, pool: NodePostgresQueryable): void {
  // The same SQL text and parameters drizzle would send for `query`.
  const dialect = new PgDialect();
  runners.set(db, async (query, parsers) => {
    const { sql: text, params } = dialect.sqlToQuery(query);
    const types = { getTypeParser: (oid: number) => parsers[oid] ?? keepText };
    return (await pool.query({ text, values: params, types })).rows;
  });
}

/** How to run a statement parsed on arrival on `db`, or undefined (PGlite, or a db Stowage did not make). */
export function parsedOnArrivalOf(db: StowageDatabase): QueryParsedOnArrival | undefined {
  return runners.get(db);
}
