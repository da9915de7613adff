import { Buffer } from "node:buffer";
import type { ReadResourceResult, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { StowageError, sniffImageType } from "@stowage/core";
import type { StowageMcpServerOptions } from "../server/options.js";
import { boundedRead, MAX_RESOURCE_READ_BYTES } from "./paged-read.js";
import {
  BLOB_SCHEME,
  CONTENT_REF_SCHEME,
  HOT_STATE_SCHEME,
  parseResourceUri,
  readUri,
  THREAD_SCHEME,
} from "./resource-uris.js";
import { DEFAULT_THREAD_PAGE_ITEMS, MAX_THREAD_PAGE_ITEMS, readThreadPage } from "./thread-page.js";

/** Most bytes of a blob one read returns (base64 makes it a third larger on the wire). */
const MAX_BLOB_READ_BYTES = 8 * 1024 * 1024;

/** The URI templates of every resource kind the options make available. */
export function resourceTemplates(options: StowageMcpServerOptions): ResourceTemplate[] {
  const templates: ResourceTemplate[] = [
    {
      name: "artifact",
      uriTemplate: "artifact://{id}{?offset,limit,char_offset}",
      description:
        "A tool output of this session (text/plain, sanitized); offset (1-based line) and limit page it, " +
        "char_offset slices a line longer than a read. _meta.next is the URI to read next.",
      mimeType: "text/plain",
    },
    {
      name: "agent",
      uriTemplate: "agent://{id}{?q,offset,limit,char_offset}",
      description:
        "A subagent output (markdown); agent://<id>/a/b/0 extracts a JSON path, ?q=.a.b[0] a jq-like query " +
        "(char_offset slices a large value). _meta.next is the URI to read next.",
      mimeType: "text/markdown",
    },
  ];
  if (options.blobs) {
    templates.push({
      name: "blob",
      uriTemplate: `${BLOB_SCHEME}{hex}`,
      description: "Content-addressed bytes by SHA-256, as base64 with their MIME type.",
    });
  }
  if (options.threads) {
    templates.push({
      name: "thread",
      uriTemplate: `${THREAD_SCHEME}{alias}{?cursor,limit}`,
      description: `The stored items of one of this session's threads, oldest first, up to limit (${DEFAULT_THREAD_PAGE_ITEMS}, at most ${MAX_THREAD_PAGE_ITEMS}) a page; next is the URI of the next page.`,
      mimeType: "application/json",
    });
  }
  if (options.registry) {
    templates.push({
      name: "content-ref",
      uriTemplate: `${CONTENT_REF_SCHEME}{artifact_id}`,
      description:
        "A content ref of the hot state (its record and text); artifacts_get pages it for a model.",
      mimeType: "application/json",
    });
  }
  if (options.hotState) {
    templates.push({
      name: "hot-state",
      uriTemplate: `${HOT_STATE_SCHEME}{version}`,
      description: "The session's stored hot state: hot-state://latest, or one version by number.",
      mimeType: "application/json",
    });
  }
  return templates;
}

function notOffered(kind: string): StowageError {
  return new StowageError("NOT_FOUND", `this server has no ${kind} resources`, { reason: "NOT_OFFERED" });
}

/** Reads one resource. Errors are StowageErrors; the server turns them into MCP errors. */
export async function readResource(
  options: StowageMcpServerOptions,
  uri: string,
  signal?: AbortSignal,
): Promise<ReadResourceResult> {
  const parsed = parseResourceUri(uri);
  switch (parsed.kind) {
    case "artifact":
    case "agent": {
      const { read, chars, next } = await boundedRead(options.session.router, parsed.url, {
        offset: parsed.offset,
        limit: parsed.limit,
        charOffset: parsed.charOffset,
        maxBytes: MAX_RESOURCE_READ_BYTES,
        signal,
        describe: (read) => readUri(parsed.url, read),
      });
      return {
        contents: [
          {
            uri,
            mimeType: read.contentType,
            text: read.text,
            _meta: {
              complete: read.complete,
              ...(read.lines ? { lines: read.lines } : {}),
              ...(chars ? { chars } : {}),
              ...(next ? { next: readUri(parsed.url, next) } : {}),
            },
          },
        ],
      };
    }
    case "blob": {
      const { blobs } = options;
      if (!blobs) throw notOffered("blob");
      const info = await blobs.stat(parsed.hash, { signal });
      if (!info) throw new StowageError("NOT_FOUND", `no blob ${parsed.hash}`, { reason: "BLOB_NOT_FOUND" });
      if (info.size > MAX_BLOB_READ_BYTES) {
        throw new StowageError(
          "TOO_LARGE",
          `blob ${parsed.hash} is ${info.size} bytes, over ${MAX_BLOB_READ_BYTES}`,
          {
            reason: "BLOB_TOO_LARGE",
            details: { size: info.size, limit: MAX_BLOB_READ_BYTES },
          },
        );
      }
      const bytes = await blobs.get(parsed.hash, { signal });
      if (!bytes) throw new StowageError("NOT_FOUND", `no blob ${parsed.hash}`, { reason: "BLOB_NOT_FOUND" });
      // Blobs carry no type: images are told by their bytes, anything else is octet-stream.
      const mimeType = sniffImageType(bytes) ?? "application/octet-stream";
      return { contents: [{ uri, mimeType, blob: Buffer.from(bytes).toString("base64") }] };
    }
    case "thread": {
      const { threads } = options;
      if (!threads) throw notOffered("thread");
      const ref = { jobId: options.session.sessionId, alias: parsed.alias };
      const [info, page] = await Promise.all([
        threads.thread(ref, { signal }),
        readThreadPage(threads, ref, {
          cursor: parsed.cursor,
          limit: parsed.limit ?? DEFAULT_THREAD_PAGE_ITEMS,
          maxBytes: MAX_RESOURCE_READ_BYTES,
          signal,
        }),
      ]);
      if (!info)
        throw new StowageError("NOT_FOUND", `no thread ${parsed.alias} in this session`, {
          reason: "THREAD_NOT_FOUND",
        });
      const next =
        page.cursor === undefined
          ? undefined
          : `${THREAD_SCHEME}${parsed.alias}?cursor=${encodeURIComponent(page.cursor)}${parsed.limit === undefined ? "" : `&limit=${parsed.limit}`}`;
      const text = JSON.stringify({ ...info, items: page.items, ...(next ? { next } : {}) });
      return {
        contents: [{ uri, mimeType: "application/json", text, ...(next ? { _meta: { next } } : {}) }],
      };
    }
    case "hot-state": {
      const { hotState } = options;
      if (!hotState) throw notOffered("hot-state");
      const sessionId = options.session.sessionId;
      const found =
        parsed.version === "latest"
          ? await hotState.latest(sessionId, { signal })
          : await hotState.get(sessionId, parsed.version, { signal });
      if (!found) {
        throw new StowageError("NOT_FOUND", `no hot state ${parsed.version} for session ${sessionId}`, {
          reason: "HOT_STATE_NOT_FOUND",
        });
      }
      const { json: _prompt, ...version } = found;
      return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(version) }] };
    }
    case "content-ref": {
      const { registry } = options;
      if (!registry) throw notOffered("content-ref");
      const missing = () =>
        new StowageError("NOT_FOUND", `content ref ${parsed.id} does not exist`, {
          reason: "CONTENT_REF_NOT_FOUND",
        });
      // The record says the size: a content ref too large for a read is never loaded.
      const record = await registry.getRecord(parsed.id, { signal });
      if (!record) throw missing();
      if (record.size_bytes > MAX_RESOURCE_READ_BYTES) {
        throw new StowageError(
          "TOO_LARGE",
          `content ref ${parsed.id} is ${record.size_bytes} bytes, more than ${MAX_RESOURCE_READ_BYTES} in one read: page it with the artifacts_get tool`,
          {
            reason: "READ_TOO_LARGE",
            details: { size: record.size_bytes, maxBytes: MAX_RESOURCE_READ_BYTES },
          },
        );
      }
      const found = await registry.get(parsed.id, { signal });
      if (!found) throw missing();
      const meta = { record: found.record };
      const text = utf8OrNull(found.content);
      return text === null
        ? {
            contents: [
              {
                uri,
                mimeType: found.record.mime ?? "application/octet-stream",
                blob: Buffer.from(found.content).toString("base64"),
                _meta: meta,
              },
            ],
          }
        : { contents: [{ uri, mimeType: found.record.mime ?? "text/plain", text, _meta: meta }] };
    }
  }
}

function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
