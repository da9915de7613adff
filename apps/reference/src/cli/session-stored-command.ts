import type { SessionBlobRepository, SessionBlobSummary } from "@stowage/sessions";
import { Command } from "commander";
import type { CommandContext } from "./context.js";
import { readSessionBlobs } from "./open.js";
import { jsonOption, printResult } from "./output.js";
import { addPrincipalOptions, type PrincipalOptions, requiredPrincipal } from "./principal-option.js";

/** Records asked for per page of the owner's listing. */
const PAGE = 1000;

/** What the HTTP API's `GET /session-blobs` answers of a record (no owner, no internal id). */
const shown = (session: SessionBlobSummary) => ({
  sessionId: session.sessionId,
  requestId: session.requestId,
  agentType: session.agentType,
  codec: session.codec,
  blobSizeBytes: session.blobSizeBytes,
  rawSizeBytes: session.rawSizeBytes,
  storedBytes: session.storedBytes,
  createdAt: session.createdAt,
  expiresAt: session.expiresAt ?? null,
});

/** Every record of `owner`, page by page. */
async function allOf(sessionBlobs: SessionBlobRepository, owner: string): Promise<SessionBlobSummary[]> {
  const sessions: SessionBlobSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await sessionBlobs.listByOwner(owner, {
      limit: PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    sessions.push(...page.sessions);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return sessions;
}

function line(session: SessionBlobSummary): string {
  const expires = session.expiresAt ? session.expiresAt.toISOString() : "never";
  return `${session.sessionId}  ${session.agentType}  request ${session.requestId}  ${session.rawSizeBytes} bytes, ${session.storedBytes} stored (${session.codec})  stored ${session.createdAt.toISOString()}  expires ${expires}`;
}

/**
 * `stowage session stored`: the sessions captured for a user or org (`session capture`, a
 * container's `POST /requests/:id/session-blobs`), which `session list` (registered sessions) does
 * not show: a captured session need not be registered, nor a registered one captured.
 */
export function storedSessionsCommand(context: CommandContext): Command {
  return addPrincipalOptions(
    new Command("stored").description(
      "List the sessions captured for a user or org (stored for follow-up runs), with their agent, request, sizes and expiry",
    ),
  )
    .addOption(jsonOption())
    .action(async (options: PrincipalOptions & { json?: boolean }) => {
      const principal = requiredPrincipal(options);
      await readSessionBlobs(context, async ({ sessionBlobs, ownerOf, where }) => {
        // No database there: nothing was captured into it, and a listing creates none.
        const sessions = sessionBlobs ? await allOf(sessionBlobs, ownerOf(principal)) : [];
        printResult(context, options.json, sessions.map(shown), () => sessions.map(line));
        if (sessions.length === 0)
          context.note(`no sessions stored for ${principal.kind} ${principal.id} in ${where}`);
      });
    });
}
