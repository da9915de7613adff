import { StowageError } from "@stowage/core";
import type { LineRange, ReadOptions } from "../read/read-options.js";
import type { ArtifactStore } from "../store/artifact-store.js";
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
}

/** Options of {@link createInternalUrlRouter}. */
export interface InternalUrlRouterOptions {
  /** The session's artifacts the URLs are read from. */
  artifacts: ArtifactStore;
}

/** A router of `artifact://` and `agent://` URLs over one session's artifacts. */
export function createInternalUrlRouter(options: InternalUrlRouterOptions): InternalUrlRouter {
  const store = options?.artifacts;
  if (typeof store?.readArtifact !== "function" || typeof store.readAgentOutput !== "function") {
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
  };
}
