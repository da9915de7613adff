import { describeValue, StowageError } from "@stowage/core";
import type { DirectoryLocation } from "../layout/directory-access.js";
import {
  describeAvailable,
  MAX_LISTED_IDS,
  noArtifactsDirectory,
  readDirectoryNames,
} from "../layout/listing.js";
import { AGENT_OUTPUT_EXTENSION, assertAgentOutputId, parseAgentOutputFileName } from "../layout/names.js";
import { extractJson, formatSteps, type JsonStep, parseJsonQuery, pathSteps } from "../read/json-extract.js";
import { type OpenedRegularFile, openRegularFile } from "../read/open-regular-file.js";
import { readLines, readWhole } from "../read/read-lines.js";
import { checkReadOptions, type LineRange, type ReadOptions } from "../read/read-options.js";

const decoder = new TextDecoder("utf-8");

export interface AgentOutputReadOptions extends ReadOptions {
  /** JSON path segments (`agent://<id>/a/b/0`), already percent-decoded. */
  path?: readonly string[];
  /** A jq-like query (`agent://<id>?q=.a.b[0]`). Cannot be combined with `path`. */
  query?: string;
}

export interface AgentOutputRead {
  id: string;
  /** `text/markdown` for the output itself; `application/json`, or `text/plain` for an extracted string. */
  contentType: "text/markdown" | "application/json" | "text/plain";
  text: string;
  /** Set for a paged read (`offset`/`limit`). */
  lines?: LineRange;
}

/** The agent output ids in `dir`, sorted; empty when the directory does not exist. */
export async function listAgentOutputIds(dir: string): Promise<string[]> {
  const names = (await readDirectoryNames(dir, "list agent outputs")) ?? [];
  return idsIn(names);
}

function idsIn(names: readonly string[]): string[] {
  const ids: string[] = [];
  for (const name of names) {
    const id = parseAgentOutputFileName(name);
    if (id !== undefined) ids.push(id);
  }
  return ids.sort();
}

function extractionSteps(id: string, options: AgentOutputReadOptions): JsonStep[] | undefined {
  const { path, query } = options;
  if (path !== undefined && query !== undefined) {
    throw new StowageError("INVALID_INPUT", `agent://${id}: path and query cannot be combined`, {
      reason: "PATH_AND_QUERY",
    });
  }
  if (path === undefined && query === undefined) return undefined;
  if (options.offset !== undefined || options.limit !== undefined) {
    throw new StowageError(
      "INVALID_INPUT",
      `agent://${id}: offset and limit page plain reads only; they cannot be combined with JSON extraction`,
      { reason: "PAGING_WITH_EXTRACTION" },
    );
  }
  if (query !== undefined) {
    if (typeof query !== "string") {
      throw new StowageError("INVALID_INPUT", `agent:// query must be a string, got ${describeValue(query)}`);
    }
    return parseJsonQuery(query);
  }
  if (!Array.isArray(path) || path.some((segment) => typeof segment !== "string" || segment === "")) {
    throw new StowageError(
      "INVALID_INPUT",
      `agent:// path must be non-empty strings, got ${describeValue(path)}`,
      {
        reason: "INVALID_QUERY",
      },
    );
  }
  return pathSteps(path);
}

/**
 * Opens `agent://<id>` (`<id>.md` in `dir`) without following links; NOT_FOUND (reason
 * `AGENT_OUTPUT_NOT_FOUND`, listing the available ids) when it does not exist. The caller closes
 * the handle.
 */
export async function openAgentOutput(location: DirectoryLocation, id: string): Promise<OpenedRegularFile> {
  const { path: dir } = location;
  if (dir === null) throw noArtifactsDirectory();
  const what = `agent output ${id}`;
  const file = await openRegularFile(dir, `${id}${AGENT_OUTPUT_EXTENSION}`, what);
  if (file) return file;
  const names = await readDirectoryNames(dir, `read ${what}`);
  if (names === null) throw noArtifactsDirectory();
  const available = idsIn(names);
  throw new StowageError("NOT_FOUND", `Not found: ${id}. Available: ${describeAvailable(available)}`, {
    reason: "AGENT_OUTPUT_NOT_FOUND",
    details: { id, available: available.slice(0, MAX_LISTED_IDS) },
  });
}

/**
 * Reads `agent://<id>` from `dir` (opened by {@link openAgentOutput}), optionally extracting a
 * JSON value by path or query, or a page of lines.
 */
export async function readAgentOutput(
  location: DirectoryLocation,
  idValue: unknown,
  options: AgentOutputReadOptions = {},
): Promise<AgentOutputRead> {
  const id = assertAgentOutputId(idValue);
  const steps = extractionSteps(id, options);
  const { page, maxBytes } = checkReadOptions(options);
  const what = `agent output ${id}`;
  const file = await openAgentOutput(location, id);
  const { handle, size } = file;
  try {
    if (steps === undefined) {
      if (page) {
        const read = await readLines(handle, page, maxBytes, what, options.signal);
        return { id, contentType: "text/markdown", text: decoder.decode(read.bytes), lines: read.lines };
      }
      const bytes = await readWhole(handle, maxBytes, what, options.signal, size);
      return { id, contentType: "text/markdown", text: decoder.decode(bytes) };
    }
    const source = decoder.decode(await readWhole(handle, maxBytes, what, options.signal, size));
    let document: unknown;
    try {
      document = JSON.parse(source);
    } catch (err) {
      throw new StowageError(
        "INVALID_INPUT",
        `agent://${id}: extraction needs the output to be JSON, but it does not parse (${(err as Error).message}); read agent://${id} without a path or query for its text`,
        { reason: "NOT_JSON", cause: err },
      );
    }
    const extraction = extractJson(document, steps);
    if (!extraction.found) {
      throw new StowageError(
        "NOT_FOUND",
        `agent://${id}: ${formatSteps(steps)} is missing: ${extraction.why}`,
        {
          reason: "JSON_PATH_NOT_FOUND",
          details: { id, path: formatSteps(steps), stoppedAt: extraction.stoppedAt },
        },
      );
    }
    if (typeof extraction.value === "string")
      return { id, contentType: "text/plain", text: extraction.value };
    let text: string;
    try {
      text = JSON.stringify(extraction.value, null, 2);
    } catch (err) {
      // Parsing is iterative, rendering recursive: a value nested a million deep parses, then overflows here.
      throw new StowageError(
        "TOO_LARGE",
        `agent://${id}: ${formatSteps(steps)} is nested too deeply to render; extract a part deeper inside it`,
        { reason: "JSON_TOO_DEEP", cause: err },
      );
    }
    return { id, contentType: "application/json", text };
  } finally {
    await handle.close().catch(() => {});
  }
}
