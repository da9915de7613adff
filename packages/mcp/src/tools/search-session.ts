import { Buffer } from "node:buffer";
import { StowageError } from "@stowage/core";
import type { ThreadFeeds } from "@stowage/thread-items";
import { z } from "zod";
import { THREAD_SCHEME } from "../resources/resource-uris.js";
import type { McpSession } from "../server/options.js";
import { inputSchemaOf, type McpTool, parseArgs, textResult } from "./tool.js";

/** Most bytes one search reads across artifacts, agent outputs and thread items. */
export const MAX_SEARCH_SCANNED_BYTES = 32 * 1024 * 1024;
/** Most matches one search returns. */
export const MAX_SEARCH_MATCHES = 100;
/** Characters of a matching line shown around the match. */
const EXCERPT_CHARS = 200;
/** Lines read per page while scanning an artifact. */
const SCAN_PAGE_LINES = 5000;

const SearchSessionInput = z.strictObject({
  text: z
    .string()
    .min(1)
    .max(256)
    .describe("Text to find (case-insensitive), in artifacts, agent outputs and thread items."),
  limit: z.int().min(1).max(MAX_SEARCH_MATCHES).optional().describe("Most matches to return (default 20)."),
});

interface Match {
  uri: string;
  line?: number;
  /** The thread item's id, for a match in a thread. */
  item?: string;
  excerpt: string;
}

function excerptAround(line: string, at: number, length: number): string {
  const start = Math.max(0, at - Math.floor((EXCERPT_CHARS - length) / 2));
  const piece = line.slice(start, start + EXCERPT_CHARS);
  return `${start > 0 ? "…" : ""}${piece}${start + EXCERPT_CHARS < line.length ? "…" : ""}`;
}

/** `search_session`: text across the session's artifacts, agent outputs and thread items, bounded. */
export function searchSessionTool(session: McpSession, threads: ThreadFeeds | undefined): McpTool {
  return {
    definition: {
      name: "search_session",
      description:
        "Find text (case-insensitive) across this session's tool outputs (artifact://), subagent outputs (agent://) " +
        `and thread items. Returns up to limit matches with their URI and line; reads at most ${MAX_SEARCH_SCANNED_BYTES / 1024 / 1024} MiB, ` +
        "and says when it stopped early. Read a match with read_artifact, query_agent_output or the resource URI.",
      inputSchema: inputSchemaOf(SearchSessionInput),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async call(args, signal) {
      const { text, limit = 20 } = parseArgs(SearchSessionInput, args, "search_session");
      const needle = text.toLowerCase();
      const matches: Match[] = [];
      let scanned = 0;
      let stopped: "limit" | "budget" | undefined;

      /** Looks through one piece of text; false once the search must stop. */
      const scan = (uri: string, body: string, firstLine: number | undefined, item?: string): boolean => {
        scanned += Buffer.byteLength(body);
        const lines = body.split("\n");
        for (let index = 0; index < lines.length; index++) {
          const line = lines[index]!;
          const at = line.toLowerCase().indexOf(needle);
          if (at === -1) continue;
          if (matches.length >= limit) {
            stopped = "limit";
            return false;
          }
          matches.push({
            uri,
            ...(firstLine === undefined ? {} : { line: firstLine + index }),
            ...(item === undefined ? {} : { item }),
            excerpt: excerptAround(line, at, needle.length),
          });
        }
        if (scanned >= MAX_SEARCH_SCANNED_BYTES) {
          stopped = "budget";
          return false;
        }
        return true;
      };

      const search = async (): Promise<void> => {
        for (const entry of await session.artifacts.listArtifacts({ signal })) {
          if (!entry.complete) continue;
          const url = `artifact://${entry.id}`;
          for (let offset = 1; ; ) {
            const read = await session.router
              .read(url, {
                offset,
                limit: SCAN_PAGE_LINES,
                maxBytes: Math.max(1, MAX_SEARCH_SCANNED_BYTES - scanned),
                signal,
              })
              .catch((err: unknown) => {
                if (StowageError.is(err, "TOO_LARGE")) return null;
                throw err;
              });
            if (read === null) {
              stopped = "budget";
              return;
            }
            if (!scan(url, read.text, offset)) return;
            if (!read.lines?.hasMore) break;
            offset = read.lines.last + 1;
          }
        }
        for (const id of await session.artifacts.listAgentOutputs({ signal })) {
          const url = `agent://${id}`;
          const read = await session.router
            .read(url, { offset: 1, maxBytes: Math.max(1, MAX_SEARCH_SCANNED_BYTES - scanned), signal })
            .catch((err: unknown) => {
              if (StowageError.is(err, "TOO_LARGE")) return null;
              throw err;
            });
          if (read === null) {
            stopped = "budget";
            return;
          }
          if (!scan(url, read.text, 1)) return;
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
                if (!scan(`${THREAD_SCHEME}${info.alias}`, JSON.stringify(item), undefined, item.id)) return;
              }
              cursor = items.cursor;
            } while (cursor !== undefined);
          }
          threadCursor = page.cursor;
        } while (threadCursor !== undefined);
      };
      await search();

      const header =
        matches.length === 0
          ? `no match for ${JSON.stringify(text)}`
          : `${matches.length} match(es) for ${JSON.stringify(text)}:`;
      const lines = matches.map(
        (m) =>
          `${m.uri}${m.line === undefined ? "" : ` line ${m.line}`}${m.item === undefined ? "" : ` item ${m.item}`}: ${m.excerpt}`,
      );
      const footer =
        stopped === "limit"
          ? `\n[stopped at ${limit} matches: search for longer text, or pass a larger limit (at most ${MAX_SEARCH_MATCHES})]`
          : stopped === "budget"
            ? `\n[stopped after reading ${MAX_SEARCH_SCANNED_BYTES} bytes: search for longer text, or read the outputs with read_artifact]`
            : "";
      return textResult([header, ...lines].join("\n") + footer, {
        matches,
        complete: stopped === undefined,
        ...(stopped ? { stopped } : {}),
        scannedBytes: scanned,
      });
    },
  };
}
