import { mapConcurrent } from "@stowage/core";
import { parsePartName } from "./part-object.js";
import { READ_CONCURRENCY, readSummary } from "./read-parts.js";
import { projectDirectory, type SessionStoreContext, sessionDirectory } from "./session-store-context.js";
import { assertSessionStoreProjectKey, toSessionScope } from "./session-store-key.js";
import type { SessionSummaryEntry, StoreOperationOptions } from "./types.js";

/** Sessions of a project with a main transcript, each with its newest part's time (storage clock). */
async function scanProject(
  context: SessionStoreContext,
  projectKey: string,
  signal: AbortSignal | undefined,
): Promise<Map<string, { mtime: number }>> {
  assertSessionStoreProjectKey(projectKey);
  const directory = projectDirectory(context, projectKey);
  const sessions = new Map<string, { mtime: number }>();
  for await (const item of context.store.iterate({ prefix: directory, signal })) {
    const rest = item.key.slice(directory.length);
    const slash = rest.indexOf("/");
    if (slash <= 0 || !parsePartName(rest.slice(slash + 1))) continue; // a subpath's part
    const sessionId = rest.slice(0, slash);
    const mtime = item.lastModified.getTime();
    const seen = sessions.get(sessionId);
    if (!seen || mtime > seen.mtime) sessions.set(sessionId, { mtime });
  }
  return sessions;
}

/** `listSessions(projectKey)`: the project's sessions that have a main transcript. */
export async function listProjectSessions(
  context: SessionStoreContext,
  projectKey: string,
  { signal }: StoreOperationOptions = {},
): Promise<Array<{ sessionId: string; mtime: number }>> {
  const sessions = await scanProject(context, projectKey, signal);
  return [...sessions].map(([sessionId, { mtime }]) => ({ sessionId, mtime }));
}

/** `listSessionSummaries(projectKey)`: each session's summary, read from its last part's header only. */
export async function listProjectSummaries(
  context: SessionStoreContext,
  projectKey: string,
  { signal }: StoreOperationOptions = {},
): Promise<SessionSummaryEntry[]> {
  const sessions = [...(await scanProject(context, projectKey, signal))];
  const summaries = await mapConcurrent(
    sessions,
    READ_CONCURRENCY,
    async ([sessionId, { mtime }]) => {
      const summary = await readSummary(
        context.store,
        sessionDirectory(context, projectKey, sessionId),
        signal,
      );
      // The sidecar's time is the storage's, the clock listSessions reads (the SDK compares them).
      return summary ? { sessionId, mtime, data: summary.data } : undefined;
    },
    signal,
  );
  return summaries.filter((summary): summary is SessionSummaryEntry => summary !== undefined);
}

/** `listSubkeys(key)`: the subpaths of the session that have parts, sorted. */
export async function listTranscriptSubkeys(
  context: SessionStoreContext,
  key: { projectKey: string; sessionId: string },
  { signal }: StoreOperationOptions = {},
): Promise<string[]> {
  const { projectKey, sessionId } = toSessionScope(key);
  const directory = sessionDirectory(context, projectKey, sessionId);
  const subkeys = new Set<string>();
  for await (const item of context.store.iterate({ prefix: directory, signal })) {
    const rest = item.key.slice(directory.length);
    const slash = rest.lastIndexOf("/");
    if (slash > 0 && parsePartName(rest.slice(slash + 1))) subkeys.add(rest.slice(0, slash));
  }
  return [...subkeys].sort(byCodePoint);
}

/**
 * Code-point order (UTF-8 byte order), the order of an S3 listing and of PostgreSQL's "C"
 * collation; JavaScript's default sort compares UTF-16 units, which puts U+10000 before U+FFFF.
 */
const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
