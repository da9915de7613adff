import { Buffer } from "node:buffer";
import type { Resource } from "@modelcontextprotocol/sdk/types.js";
import { StowageError } from "@stowage/core";
import { z } from "zod";
import type { StowageMcpServerOptions } from "../server/options.js";
import { CONTENT_REF_SCHEME, HOT_STATE_SCHEME, THREAD_SCHEME } from "./resource-uris.js";

/** Longest cursor an ObjectStore listing takes back (core's README: 4,096 characters). */
const MAX_CURSOR_LENGTH = 4096;

/** Most resources one `resources/list` page names; `nextCursor` leads to the rest. */
const MAX_LISTED_PER_PAGE = 500;

/**
 * Where a listing goes on: the kind it stopped in and the position inside it (the last artifact
 * or agent-output id listed, or the thread or registry listing's own cursor). Kinds come in this
 * order, oldest first inside each, so ids written meanwhile land after the position, never before.
 */
const PositionSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("artifact"), after: z.string().max(32).optional() }),
  z.strictObject({ kind: z.literal("agent"), after: z.string().max(256).optional() }),
  z.strictObject({
    kind: z.literal("thread"),
    cursor: z
      .string()
      .max(MAX_CURSOR_LENGTH * 8)
      .optional(),
  }),
  z.strictObject({
    kind: z.literal("content-ref"),
    cursor: z
      .string()
      .max(MAX_CURSOR_LENGTH * 8)
      .optional(),
  }),
  z.strictObject({ kind: z.literal("hot-state") }),
]);
type Position = z.infer<typeof PositionSchema>;
const KINDS: readonly Position["kind"][] = ["artifact", "agent", "thread", "content-ref", "hot-state"];

const encodeCursor = (position: Position) => Buffer.from(JSON.stringify(position)).toString("base64url");

function decodeCursor(cursor: string): Position {
  const parsed = PositionSchema.safeParse(
    (() => {
      try {
        return JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
      } catch {
        return undefined;
      }
    })(),
  );
  if (!parsed.success || encodeCursor(parsed.data) !== cursor) {
    throw new StowageError("INVALID_INPUT", "cursor is not one resources/list returned", {
      reason: "INVALID_CURSOR",
    });
  }
  return parsed.data;
}

/**
 * One page of what exists: artifacts, agent outputs, threads, content refs and the latest hot
 * state, at most {@link MAX_LISTED_PER_PAGE}, with the cursor of the next page when there is more.
 */
export async function listResources(
  options: StowageMcpServerOptions,
  cursor: string | undefined,
  signal?: AbortSignal,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const { session, threads, registry, hotState } = options;
  const resources: Resource[] = [];
  const room = () => MAX_LISTED_PER_PAGE - resources.length;
  const start = cursor === undefined ? { kind: "artifact" as const } : decodeCursor(cursor);
  const page = (next: Position) => ({ resources, nextCursor: encodeCursor(next) });

  for (const kind of KINDS.slice(KINDS.indexOf(start.kind))) {
    const from: Position = kind === start.kind ? start : ({ kind } as Position);
    if (room() === 0) return page({ kind } as Position);
    if (kind === "artifact") {
      const after = from.kind === "artifact" && from.after !== undefined ? Number(from.after) : -1;
      const entries = (await session.artifacts.listArtifacts({ signal })).filter((e) => Number(e.id) > after);
      const listed = entries.slice(0, room());
      for (const entry of listed) {
        resources.push({
          uri: `artifact://${entry.id}`,
          name: entry.fileName,
          title: `${entry.toolType} output ${entry.id}${entry.complete ? "" : " (still being written)"}`,
          mimeType: "text/plain",
        });
      }
      if (listed.length < entries.length) return page({ kind: "artifact", after: listed.at(-1)!.id });
    } else if (kind === "agent") {
      const after = from.kind === "agent" ? from.after : undefined;
      const ids = (await session.artifacts.listAgentOutputs({ signal })).filter(
        (id) => after === undefined || id > after,
      );
      const listed = ids.slice(0, room());
      for (const id of listed) {
        resources.push({
          uri: `agent://${id}`,
          name: `${id}.md`,
          title: `subagent output ${id}`,
          mimeType: "text/markdown",
        });
      }
      if (listed.length < ids.length) return page({ kind: "agent", after: listed.at(-1)! });
    } else if (kind === "thread" && threads) {
      const more = await drain(
        from.kind === "thread" ? from.cursor : undefined,
        room,
        async (limit, position) => {
          const found = await threads.threads({
            jobId: session.sessionId,
            limit,
            ...(position === undefined ? {} : { cursor: position }),
            signal,
          });
          return { items: found.threads, cursor: found.cursor };
        },
        (info) =>
          resources.push({
            uri: `${THREAD_SCHEME}${info.alias}`,
            name: `thread ${info.alias}`,
            title: `thread ${info.jobId}/${info.alias} (${info.status})`,
            mimeType: "application/json",
          }),
      );
      if (more !== undefined) return page({ kind: "thread", cursor: more });
    } else if (kind === "content-ref" && registry) {
      const more = await drain(
        from.kind === "content-ref" ? from.cursor : undefined,
        room,
        (limit, position) =>
          registry.list({ limit, ...(position === undefined ? {} : { cursor: position }), signal }),
        (record) =>
          resources.push({
            uri: `${CONTENT_REF_SCHEME}${record.artifact_id}`,
            name: record.artifact_id,
            title: `${record.type} content ref${record.summary ? `: ${record.summary}` : ""}`,
            mimeType: "application/json",
            size: record.size_bytes,
          }),
      );
      if (more !== undefined) return page({ kind: "content-ref", cursor: more });
    } else if (
      kind === "hot-state" &&
      hotState &&
      (await hotState.latest(session.sessionId, { signal })) !== null
    ) {
      resources.push({
        uri: `${HOT_STATE_SCHEME}latest`,
        name: "hot state",
        title: `the latest hot state of session ${session.sessionId}`,
        mimeType: "application/json",
      });
    }
  }
  return { resources };
}

/**
 * Adds the entries of a cursor-paged listing from `position` while the page has room; the
 * listing's cursor to go on from when the page filled before the listing ended.
 */
async function drain<T>(
  position: string | undefined,
  room: () => number,
  list: (limit: number, cursor: string | undefined) => Promise<{ items: T[]; cursor: string | undefined }>,
  add: (item: T) => void,
): Promise<string | undefined> {
  let cursor = position;
  do {
    const found = await list(room(), cursor);
    for (const item of found.items) add(item);
    cursor = found.cursor;
    if (cursor !== undefined && room() === 0) return cursor;
  } while (cursor !== undefined);
  return undefined;
}
