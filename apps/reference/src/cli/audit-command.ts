import type { DeletionAuditRow } from "@stowage/tenancy/shared";
import { Command } from "commander";
import { parseIsoTime, parseSpanMs } from "../time-input.js";
import type { CommandContext } from "./context.js";
import { withStoredData } from "./open.js";
import { jsonOption, printResult } from "./output.js";
import { addPrincipalOptions, type PrincipalOptions, principalFrom } from "./principal-option.js";
import { usageError } from "./usage-error.js";

interface AuditOptions extends PrincipalOptions {
  since?: Date;
  deployment?: boolean;
  json?: boolean;
}

/** `--since`: an ISO 8601 time (`2026-11-01`, `2026-11-01T10:00:00Z`) or a span back from now (`7d`, `12h`). */
export function parseSince(value: string, now = Date.now()): Date {
  const spanMs = parseSpanMs(value);
  if (spanMs !== undefined) return new Date(now - spanMs);
  const at = parseIsoTime(value);
  if (at === undefined) {
    throw usageError(
      `--since must be an ISO 8601 time or a span such as 7d or 12h, got ${JSON.stringify(value)}`,
    );
  }
  return at;
}

const line = (row: DeletionAuditRow) =>
  `${row.at}  ${row.kind}  ${row.id}${row.bytes === undefined ? "" : `  ${row.bytes} bytes`}  by ${row.by}  ${row.reason}`;

/**
 * `stowage audit`: what was deleted of a principal's (`--user`/`--org`), or what sweeps deleted
 * without knowing whose it was (`--deployment`), oldest first: the rows the server's `GET /audit`
 * gives, read from the shared store.
 */
export function auditCommand(context: CommandContext): Command {
  return addPrincipalOptions(
    new Command("audit").description(
      "List what was deleted (sessions, stored sessions, uploads, blobs): what, bytes, by whom, when and why",
    ),
  )
    .option("--deployment", "what sweeps deleted without knowing its owner", false)
    .option(
      "--since <time>",
      "only rows at or after this time (ISO 8601, or 7d, 12h back from now)",
      (value) => parseSince(value),
    )
    .addOption(jsonOption())
    .action(async (options: AuditOptions) => {
      const principal = principalFrom(options);
      if ((principal === undefined) === !options.deployment) {
        throw usageError("give one of --user <id>, --org <id> or --deployment: whose deletions?");
      }
      await withStoredData(context, async (stored) => {
        const audit = principal ? stored.deletionAudit(principal) : stored.deploymentAudit;
        const rows: DeletionAuditRow[] = [];
        let unreadable = 0;
        let cursor: string | undefined;
        do {
          const page = await audit.list({
            limit: 1000,
            ...(options.since ? { since: options.since } : {}),
            ...(cursor === undefined ? {} : { cursor }),
          });
          rows.push(...page.rows);
          unreadable += page.unreadable;
          cursor = page.cursor;
        } while (cursor !== undefined);
        printResult(context, options.json, { rows, unreadable }, () => [
          ...rows.map(line),
          `${rows.length} deletion(s)${unreadable > 0 ? `; ${unreadable} damaged audit object(s) skipped` : ""}`,
        ]);
      });
    });
}
