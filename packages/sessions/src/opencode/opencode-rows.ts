import { StowageError } from "@stowage/core";
import type { OpencodeExportIds } from "./export-json.js";
import { type OpencodeCliOptions, runOpencode } from "./opencode-cli.js";

/** A message or part row that already exists, and the session it belongs to. */
export interface OpencodeRow {
  table: "message" | "part";
  id: string;
  sessionId: string;
}

export interface OpencodeRowOwners {
  /** Whether OpenCode's database already holds a session of this id. */
  sessionExists: boolean;
  /** The export's message and part ids that exist in the database, with their sessions. */
  existing: OpencodeRow[];
}

/**
 * Longest SQL text passed in one `opencode db` run: an argument longer than 128 KiB is refused
 * by Linux (MAX_ARG_STRLEN), so the ids are asked about in batches.
 */
const MAX_QUERY_CHARS = 60 * 1024;

/** Only safe ids (checked by `readOpencodeExport`) are quoted: no quote can end the literal. */
const quote = (id: string) => `'${id}'`;

/** The SELECTs asking about `sessionId` and every id, in batches that each fit one argument. */
function queries(sessionId: string, ids: OpencodeExportIds): string[] {
  const batches: { message: string[]; part: string[] }[] = [{ message: [], part: [] }];
  let length = 0;
  for (const table of ["message", "part"] as const) {
    for (const id of ids[table === "message" ? "messageIds" : "partIds"]) {
      if (length + id.length + 3 > MAX_QUERY_CHARS) {
        batches.push({ message: [], part: [] });
        length = 0;
      }
      batches.at(-1)![table].push(id);
      length += id.length + 3;
    }
  }
  return batches.map((batch, index) => {
    const clauses =
      index === 0
        ? [`SELECT 'session' AS kind, id, id AS owner FROM session WHERE id = ${quote(sessionId)}`]
        : [];
    for (const table of ["message", "part"] as const) {
      if (batch[table].length === 0) continue;
      clauses.push(
        `SELECT '${table}' AS kind, id, session_id AS owner FROM ${table} WHERE id IN (${batch[table].map(quote).join(",")})`,
      );
    }
    return clauses.join(" UNION ALL ");
  });
}

/**
 * Asks OpenCode's database, through the CLI's own `opencode db <query> --format json` (OpenCode
 * opens it as it always does; nothing is copied), whether the session exists and which of the
 * export's message and part ids are already there, and in which session. Read-only SELECTs.
 */
export async function opencodeRowOwners(
  cli: OpencodeCliOptions,
  sessionId: string,
  ids: OpencodeExportIds,
  signal?: AbortSignal,
): Promise<OpencodeRowOwners> {
  const found: OpencodeRowOwners = { sessionExists: false, existing: [] };
  for (const sql of queries(sessionId, ids)) {
    const stdout = await runOpencode(cli, ["db", sql, "--format", "json"], {
      maxOutputBytes: 16 * 1024 * 1024,
      ...(signal ? { signal } : {}),
    });
    const text = stdout.toString("utf8").trim();
    let rows: unknown;
    try {
      // An empty answer is no row.
      rows = text === "" ? [] : JSON.parse(text);
    } catch (err) {
      rows = err;
    }
    if (!Array.isArray(rows)) {
      throw new StowageError(
        "UNAVAILABLE",
        `opencode db printed something other than JSON rows: ${text.slice(0, 200)}`,
        {
          reason: "OPENCODE_CLI_FAILED",
        },
      );
    }
    for (const row of rows as { kind?: unknown; id?: unknown; owner?: unknown }[]) {
      const { owner } = row;
      if (row.kind === "session") found.sessionExists = true;
      else if (
        (row.kind === "message" || row.kind === "part") &&
        typeof row.id === "string" &&
        typeof owner === "string"
      ) {
        found.existing.push({ table: row.kind, id: row.id, sessionId: owner });
      }
    }
  }
  return found;
}
