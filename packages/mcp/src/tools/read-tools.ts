import { Buffer } from "node:buffer";
import { describeValue, StowageError } from "@stowage/core";
import { z } from "zod";
import {
  type BoundedRead,
  boundedRead,
  DEFAULT_PAGE_LINES,
  isExtraction,
  MAX_PAGE_LINES,
  MAX_TOOL_RESULT_BYTES,
  type NextRead,
} from "../resources/paged-read.js";
import type { McpSession } from "../server/options.js";
import { inputSchemaOf, type McpTool, parseArgs, textResult } from "./tool.js";

/** An id as a model may send it: a string, or a number for `artifact://` ids. */
const idSchema = z.union([z.string().max(256), z.int().min(0)]).transform(String);
const offsetSchema = z
  .int()
  .min(1)
  .optional()
  .describe("1-based first line; pass next_offset from the previous call.");
const limitSchema = z
  .int()
  .min(1)
  .max(MAX_PAGE_LINES)
  .optional()
  .describe(
    `Most lines to return (default ${DEFAULT_PAGE_LINES}, at most ${MAX_PAGE_LINES}); fewer come back when they would pass ${MAX_TOOL_RESULT_BYTES / 1024} KiB.`,
  );
const charOffsetSchema = z
  .int()
  .min(0)
  .optional()
  .describe(
    "0-based character to start at, for a line (or an extracted value) too long for one result; pass next_char_offset.",
  );

const ReadArtifactInput = z.strictObject({
  id: idSchema.describe("The artifact's numeric id, as in artifact://<id>."),
  offset: offsetSchema,
  limit: limitSchema,
  char_offset: charOffsetSchema,
});

const QueryAgentOutputInput = z.strictObject({
  id: z.string().max(256).describe("The subagent output id, as in agent://<id> (e.g. 0-Explore)."),
  path: z
    .string()
    .max(4096)
    .optional()
    .describe(
      "A JSON path into the output, segments separated by / (findings/0/file); percent-encode / inside a key.",
    ),
  q: z
    .string()
    .max(4096)
    .optional()
    .describe('A jq-like query (.findings[0].line, .["odd key"]); not with path.'),
  offset: offsetSchema,
  limit: limitSchema,
  char_offset: charOffsetSchema,
});

/** How to make `next` with `tool`, in words a model follows. */
function callWith(tool: string, next: NextRead, extraction: boolean): string {
  // The limit is left out: a model passing it again gets its page size, and one that does not the default.
  const args = [
    ...(next.offset === undefined ? [] : [`offset=${next.offset}`]),
    ...(next.charOffset === undefined ? [] : [`char_offset=${next.charOffset}`]),
  ];
  return `call ${tool} again with ${extraction ? "the same path or q and " : ""}${args.join(" and ")}`;
}

/** The last line of a result: what it holds and how to read on. */
function footer(url: string, { read, chars, next }: BoundedRead, tool: string, extraction: boolean): string {
  const more = next ? `; more: ${callWith(tool, next, extraction)}` : ", end";
  if (chars) {
    const line = read.lines && !extraction ? `line ${read.lines.first}, ` : "";
    return `\n[${url}: ${line}characters ${chars.first}–${chars.end} of ${chars.total}${more}]`;
  }
  if (!read.lines) return "";
  const { first, last, totalLines } = read.lines;
  return `\n[${url}: lines ${first}–${last}${!next && totalLines !== undefined ? ` of ${totalLines}` : ""}${more}]`;
}

async function readLines(
  session: McpSession,
  url: string,
  tool: string,
  args: { offset?: number | undefined; limit?: number | undefined; char_offset?: number | undefined },
  signal: AbortSignal,
) {
  const extraction = isExtraction(url);
  // Plain reads always go by pages: a whole output could be anything up to the router's bound.
  const paging =
    extraction || args.char_offset !== undefined
      ? { offset: args.offset, limit: args.limit }
      : { offset: args.offset ?? 1, limit: args.limit ?? DEFAULT_PAGE_LINES };
  const result = await boundedRead(session.router, url, {
    ...paging,
    charOffset: args.char_offset,
    maxBytes: MAX_TOOL_RESULT_BYTES,
    signal,
    describe: (next) => callWith(tool, next, extraction),
  });
  const { read, chars, next } = result;
  // Claude Code hands a model only `structuredContent` when there is one, so it carries the text too.
  const structured = {
    url,
    text: read.text,
    contentType: read.contentType,
    complete: read.complete,
    ...(read.lines && !extraction ? { lines: read.lines } : {}),
    ...(chars ? { chars } : {}),
    ...(read.lines || chars
      ? { next_offset: next?.charOffset === undefined ? (next?.offset ?? null) : (next.offset ?? null) }
      : {}),
    ...(chars ? { next_char_offset: next?.charOffset ?? null } : {}),
    bytes: Buffer.byteLength(read.text),
  };
  const incomplete = read.complete ? "" : "\n[the tool is still writing this output: read again for more]";
  return textResult(read.text + footer(url, result, tool, extraction) + incomplete, structured);
}

/** `read_artifact`: a tool output of the session, a page of lines at a time. */
export function readArtifactTool(session: McpSession): McpTool {
  return {
    definition: {
      name: "read_artifact",
      description:
        `Read a stored tool output of this session (artifact://<id>) by lines: up to ${DEFAULT_PAGE_LINES} lines ` +
        `from offset (1-based), fewer when they pass ${MAX_TOOL_RESULT_BYTES / 1024} KiB; a longer line comes in slices (char_offset). ` +
        "The result ends with the range and, when there is more, the arguments to read the rest.",
      inputSchema: inputSchemaOf(ReadArtifactInput),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async call(args, signal) {
      const input = parseArgs(ReadArtifactInput, args, "read_artifact");
      // The id goes into the URL as given: the router parses and refuses it as the HTTP API does.
      return readLines(session, `artifact://${input.id}`, "read_artifact", input, signal);
    },
  };
}

/** `query_agent_output`: a subagent output, whole, by JSON path or by `?q=` query. */
export function queryAgentOutputTool(session: McpSession): McpTool {
  return {
    definition: {
      name: "query_agent_output",
      description:
        "Read a subagent's output (agent://<id>): the markdown by lines (offset/limit), or, when it is JSON, " +
        "one value by path (findings/0/file) or by a jq-like query q (.findings[0].file); a large value comes in slices (char_offset).",
      inputSchema: inputSchemaOf(QueryAgentOutputInput),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async call(args, signal) {
      const input = parseArgs(QueryAgentOutputInput, args, "query_agent_output");
      // `/`, `?` and `#` would make the id carry a path or a query of its own.
      if (/[/?#]/.test(input.id)) {
        throw new StowageError(
          "INVALID_INPUT",
          `agent output id must not contain / ? or #, got ${describeValue(input.id)}`,
          {
            reason: "INVALID_AGENT_OUTPUT_ID",
          },
        );
      }
      const url =
        `agent://${input.id}` +
        (input.path === undefined ? "" : `/${input.path}`) +
        (input.q === undefined ? "" : `?q=${encodeURIComponent(input.q)}`);
      return readLines(session, url, "query_agent_output", input, signal);
    },
  };
}
