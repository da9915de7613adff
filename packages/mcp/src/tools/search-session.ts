import type { ThreadFeeds } from "@stowage/thread-items";
import { z } from "zod";
import { THREAD_SCHEME } from "../resources/resource-uris.js";
import type { McpSession } from "../server/options.js";
import {
  MAX_SEARCH_SCANNED_BYTES,
  MAX_SEARCH_SOURCE_BYTES,
  type PartialSource,
  SessionSearch,
} from "./session-search.js";
import { inputSchemaOf, type McpTool, parseArgs, textResult } from "./tool.js";

/** Most matches one search returns. */
const MAX_SEARCH_MATCHES = 100;

const MIB = 1024 * 1024;

const SearchSessionInput = z.strictObject({
  text: z
    .string()
    .min(1)
    .max(256)
    .describe("Text to find (case-insensitive), in artifacts, agent outputs and thread items."),
  limit: z.int().min(1).max(MAX_SEARCH_MATCHES).optional().describe("Most matches to return (default 20)."),
});

/** Where to read on in a source the search read only in part. */
function readOnHint({ uri, line }: PartialSource): string {
  const [scheme, id] = uri.split("://") as [string, string];
  const tool = scheme === "artifact" ? "read_artifact" : "query_agent_output";
  return `${tool} with id ${JSON.stringify(id)} and offset=${line}`;
}

/** The lines after the matches: everything the search did not look at, and how to look. */
function footerOf(search: SessionSearch, limit: number): string[] {
  const notes: string[] = [];
  for (const source of search.partial) {
    notes.push(
      `[${source.uri}: searched only its first ${source.scannedBytes} of ${source.size} bytes, up to line ${source.line}; read on with ${readOnHint(source)}]`,
    );
  }
  for (const { uri, scannedBytes } of search.incomplete) {
    notes.push(`[${uri} is still being written: searched the ${scannedBytes} bytes written so far]`);
  }
  for (const { uri, code, reason } of search.skipped) {
    const why = `${code}${reason === undefined ? "" : ` (${reason})`}`;
    // A scheme alone stands for its listing: none of its sources could be looked at.
    if (uri.endsWith("://")) notes.push(`[skipped every ${uri}: their listing cannot be read, ${why}]`);
    else notes.push(`[skipped ${uri}: it cannot be read, ${why}]`);
  }
  if (search.skippedNotListed > 0)
    notes.push(`[skipped ${search.skippedNotListed} more that cannot be read]`);
  if (search.stopped === "limit") {
    notes.push(
      `[stopped at ${limit} matches: search for longer text, or pass a larger limit (at most ${MAX_SEARCH_MATCHES})]`,
    );
  } else if (search.stopped === "budget") {
    notes.push(
      `[stopped after reading ${search.scannedBytes} bytes, the most one search reads: what comes after was not searched; read it with read_artifact or query_agent_output]`,
    );
  }
  return notes;
}

/** `search_session`: text across the session's artifacts, agent outputs and thread items, bounded. */
export function searchSessionTool(session: McpSession, threads: ThreadFeeds | undefined): McpTool {
  return {
    definition: {
      name: "search_session",
      description:
        "Find text (case-insensitive) across this session's tool outputs (artifact://), subagent outputs (agent://) " +
        `and thread items. Returns up to limit matches with their URI and line; reads at most ${MAX_SEARCH_SCANNED_BYTES / MIB} MiB, ` +
        `at most ${MAX_SEARCH_SOURCE_BYTES / MIB} MiB of one output, and says what it skipped, cut or stopped at. ` +
        "Read a match with read_artifact, query_agent_output or the resource URI.",
      inputSchema: inputSchemaOf(SearchSessionInput),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async call(args, signal) {
      const { text, limit = 20 } = parseArgs(SearchSessionInput, args, "search_session");
      const search = new SessionSearch(text, limit, signal);
      const searchAll = async (): Promise<void> => {
        for (const entry of await search.listed("artifact", session.artifacts.listArtifacts({ signal }))) {
          if (!(await search.searchFile(session.router, `artifact://${entry.id}`, true))) return;
        }
        // Agent outputs are returned as written (not sanitized), so they are searched as written.
        for (const id of await search.listed("agent", session.artifacts.listAgentOutputs({ signal }))) {
          if (!(await search.searchFile(session.router, `agent://${id}`, false))) return;
        }
        if (!threads) return;
        let threadCursor: string | undefined;
        do {
          const page = await threads.threads({
            jobId: session.sessionId,
            ...(threadCursor ? { cursor: threadCursor } : {}),
            signal,
          });
          for (const info of page.threads) {
            let cursor: string | undefined;
            do {
              const items = await threads.items(info, { ...(cursor ? { cursor } : {}), signal });
              for (const item of items.items) {
                if (!search.searchThreadItem(`${THREAD_SCHEME}${info.alias}`, item)) return;
              }
              cursor = items.cursor;
            } while (cursor !== undefined);
          }
          threadCursor = page.cursor;
        } while (threadCursor !== undefined);
      };
      await searchAll();
      const { matches } = search;
      const header =
        matches.length === 0
          ? `no match for ${JSON.stringify(text)}`
          : `${matches.length} match(es) for ${JSON.stringify(text)}:`;
      const lines = matches.map(
        (m) =>
          `${m.uri}${m.line === undefined ? "" : ` line ${m.line}`}${m.item === undefined ? "" : ` item ${m.item}`}: ${m.excerpt}`,
      );
      const footer = footerOf(search, limit);
      return textResult([header, ...lines].join("\n") + footer.map((note) => `\n${note}`).join(""), {
        matches,
        complete: search.complete,
        ...(search.stopped ? { stopped: search.stopped } : {}),
        scannedBytes: search.scannedBytes,
        ...(search.partial.length > 0 ? { partial: search.partial } : {}),
        ...(search.incomplete.length > 0 ? { incomplete: search.incomplete } : {}),
        ...(search.skipped.length > 0 ? { skipped: search.skipped } : {}),
        ...(search.skippedNotListed > 0 ? { skippedNotListed: search.skippedNotListed } : {}),
      });
    },
  };
}
