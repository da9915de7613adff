import { StowageError } from "@stowage/core";
import type { ByteRangeOptions, LineRange, ReadOptions } from "../read/read-options.js";
import type { ArtifactStore } from "../store/artifact-store.js";
import type { ByteRangeRead } from "../store/read-bytes.js";
import { isInternalUrl, parseInternalUrl } from "./internal-url.js";

export interface InternalReadOptions extends ReadOptions {
  /** For `artifact://` of a running tool: return the output so far (`complete: false`) instead of failing. */
  allowIncomplete?: boolean;
  /** For `artifact://`: the text as the tool wrote it, not sanitized for a model. Default false. */
  raw?: boolean;
}

export interface InternalResource {
  url: string;
  scheme: "artifact" | "agent";
  id: string;
  contentType: "text/plain" | "text/markdown" | "application/json";
  text: string;
  /** False only for an artifact still being written, read with `allowIncomplete`. */
  complete: boolean;
  /** Set for a paged read (`offset`/`limit`). */
  lines?: LineRange;
}

export interface InternalByteRangeOptions extends ByteRangeOptions {
  /** For `artifact://` of a running tool: read the output so far (`complete: false`) instead of failing. */
  allowIncomplete?: boolean;
}

/** Raw bytes of a plain `artifact://<id>` or `agent://<id>`, from a byte position. */
export interface InternalByteRange extends ByteRangeRead {
  url: string;
  scheme: "artifact" | "agent";
}

/** Resolves `artifact://` and `agent://` URLs against one session's artifacts. */
export interface InternalUrlRouter {
  /** True for `artifact://…` and `agent://…` (which may still be malformed). */
  canHandle(url: unknown): url is string;
  /**
   * Reads a URL. Hostile ids (`../x`, `1/../../etc`, `%2e%2e`, NUL, absolute paths) fail with
   * INVALID_INPUT before any file is touched; files are found by exact name in the session's
   * directory and opened without following links.
   */
  read(url: string, options?: InternalReadOptions): Promise<InternalResource>;
  /**
   * Reads raw bytes (neither decoded nor sanitized) of a plain `artifact://<id>` or `agent://<id>`
   * from `start` (default 0): at most `maxBytes`, fewer at the end of the file, none at its end.
   * Each call reads only its range, so a file is scanned range after range in linear time. Ids and
   * files are checked as by `read`; a JSON path or query is INVALID_INPUT (reason
   * `PAGING_WITH_EXTRACTION`), as is a bad `start` or `maxBytes` (`INVALID_READ_OPTION`) or a
   * `start` past the end (`OFFSET_PAST_END`).
   */
  readBytes(url: string, options?: InternalByteRangeOptions): Promise<InternalByteRange>;
}

/** Options of {@link createInternalUrlRouter}. */
export interface InternalUrlRouterOptions {
  /** The session's artifacts the URLs are read from. */
  artifacts: ArtifactStore;
}

/** A router of `artifact://` and `agent://` URLs over one session's artifacts. */
export function createInternalUrlRouter(options: InternalUrlRouterOptions): InternalUrlRouter {
  const store = options?.artifacts;
  if (
    typeof store?.readArtifact !== "function" ||
    typeof store.readAgentOutput !== "function" ||
    typeof store.readArtifactBytes !== "function" ||
    typeof store.readAgentOutputBytes !== "function"
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      "createInternalUrlRouter: artifacts must be an ArtifactStore (createArtifactStore), given as { artifacts }",
    );
  }
  return {
    canHandle: isInternalUrl,
    async read(url, options = {}) {
      const parsed = parseInternalUrl(url);
      if (parsed.scheme === "artifact") {
        const read = await store.readArtifact(parsed.id, options);
        return {
          url,
          scheme: "artifact",
          id: read.id,
          contentType: "text/plain",
          text: read.text,
          complete: read.complete,
          ...(read.lines ? { lines: read.lines } : {}),
        };
      }
      const read = await store.readAgentOutput(parsed.id, {
        ...options,
        ...(parsed.path ? { path: parsed.path } : {}),
        ...(parsed.query !== undefined ? { query: parsed.query } : {}),
      });
      return {
        url,
        scheme: "agent",
        id: read.id,
        contentType: read.contentType,
        text: read.text,
        complete: true,
        ...(read.lines ? { lines: read.lines } : {}),
      };
    },
    async readBytes(url, options = {}) {
      const parsed = parseInternalUrl(url);
      if (parsed.scheme === "artifact") {
        return { url, scheme: "artifact", ...(await store.readArtifactBytes(parsed.id, options)) };
      }
      if (parsed.path !== undefined || parsed.query !== undefined) {
        throw new StowageError(
          "INVALID_INPUT",
          `agent://${parsed.id}: a byte range reads the output itself; it cannot be combined with a JSON path or query`,
          { reason: "PAGING_WITH_EXTRACTION" },
        );
      }
      return { url, scheme: "agent", ...(await store.readAgentOutputBytes(parsed.id, options)) };
    },
  };
}
