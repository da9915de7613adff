import { type Logger, StowageError, type Unsubscribe } from "@stowage/core";
import type { HotStateReader } from "@stowage/hot-state";
import type { ThreadFeeds } from "@stowage/thread-items";
import { parseResourceUri } from "../resources/resource-uris.js";
import type { McpSession } from "../server/options.js";
import { type ThreadMark, threadMark } from "./thread-mark.js";

/** Most URIs one connection may subscribe to. */
const MAX_SUBSCRIPTIONS = 256;

export interface ResourceSubscriptions {
  /** Starts watching `uri` (validated like a read); a URI whose content never changes is accepted and never notified. */
  subscribe(uri: string): Promise<void>;
  unsubscribe(uri: string): Promise<void>;
  close(): Promise<void>;
}

type Watch =
  /** An artifact or agent output, by what was seen last: `missing`, `partial`, `complete`. */
  | { kind: "artifact" | "agent"; id: string; state: string }
  | { kind: "hot-state"; version: number }
  /** A thread told by the feeds' notifier. */
  | { kind: "thread"; stop: Unsubscribe }
  /** A thread looked at every tick: where its listing ended last time. */
  | { kind: "polled-thread"; alias: string; mark: ThreadMark }
  | { kind: "static" };

/** What one tick sees, each listing made once whatever the number of watches that need it. */
interface Snapshot {
  artifacts?: Promise<Map<string, boolean>>;
  agents?: Promise<Set<string>>;
  hotState?: Promise<number>;
}

/**
 * Subscriptions of one connection. Artifacts and agent outputs are files written by other
 * processes, so they are polled (one timer for all of them, only while any is watched; each tick
 * lists the artifacts once, however many are watched) and notified when they appear or complete.
 * Threads are notified on every post through the feeds' notifier, which reaches every process
 * sharing it; with `threadUpdates: "poll"` (a notifier that does not reach the posting process)
 * each watched thread's listing is looked at every tick instead, from where it ended last time.
 */
export function createResourceSubscriptions(options: {
  session: McpSession;
  threads: ThreadFeeds | undefined;
  hotState: HotStateReader | undefined;
  pollIntervalMs: number;
  threadUpdates: "notifier" | "poll";
  notify: (uri: string) => Promise<void>;
  logger: Logger;
}): ResourceSubscriptions {
  const { session, threads, hotState, pollIntervalMs, notify, logger } = options;
  const watches = new Map<string, Watch>();
  let timer: NodeJS.Timeout | undefined;
  let polling = false;

  const send = (uri: string) => {
    notify(uri).catch((err: unknown) =>
      logger.warn(`could not send a resource update of ${uri}: ${String(err)}`),
    );
  };
  const threadRef = (alias: string) => ({ jobId: session.sessionId, alias });

  function look(snapshot: Snapshot, watch: Watch) {
    if (watch.kind === "hot-state") {
      snapshot.hotState ??= hotState!.latest(session.sessionId).then((found) => found?.version ?? 0);
      return snapshot.hotState;
    }
    if (watch.kind === "artifact") {
      snapshot.artifacts ??= session.artifacts
        .listArtifacts()
        .then((entries) => new Map(entries.map((entry) => [entry.id, entry.complete])));
      return snapshot.artifacts.then((found) =>
        found.has(watch.id) ? (found.get(watch.id) ? "complete" : "partial") : "missing",
      );
    }
    if (watch.kind === "agent") {
      snapshot.agents ??= session.artifacts.listAgentOutputs().then((ids) => new Set(ids));
      return snapshot.agents.then((found) => (found.has(watch.id) ? "complete" : "missing"));
    }
    return undefined;
  }

  async function poll(): Promise<void> {
    if (polling) return;
    polling = true;
    const snapshot: Snapshot = {};
    try {
      for (const [uri, watch] of watches) {
        try {
          if (watch.kind === "artifact" || watch.kind === "agent") {
            const state = await look(snapshot, watch);
            if (state === watch.state) continue;
            watch.state = state as string;
          } else if (watch.kind === "hot-state") {
            const version = await look(snapshot, watch);
            if (version === watch.version) continue;
            watch.version = version as number;
          } else if (watch.kind === "polled-thread") {
            const mark = await threadMark(threads!, threadRef(watch.alias), watch.mark);
            const grew = mark.cursor !== watch.mark.cursor || mark.seen !== watch.mark.seen;
            watch.mark = mark;
            if (!grew) continue;
          } else continue;
          // Unsubscribed while this tick looked: nothing to tell.
          if (watches.get(uri) === watch) send(uri);
        } catch (err) {
          logger.warn(`could not look for changes of ${uri}: ${String(err)}`);
        }
      }
    } finally {
      polling = false;
    }
  }

  function updateTimer(): void {
    const needed = [...watches.values()].some((watch) => watch.kind !== "static" && watch.kind !== "thread");
    if (needed && timer === undefined) {
      timer = setInterval(() => void poll(), pollIntervalMs);
      timer.unref();
    } else if (!needed && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  async function watchOf(uri: string): Promise<Watch> {
    const parsed = parseResourceUri(uri);
    if (parsed.kind === "artifact" || parsed.kind === "agent") {
      // `artifact://3` (paging or extraction left aside) is the file that is watched.
      const rest = parsed.url.slice(parsed.kind === "artifact" ? "artifact://".length : "agent://".length);
      const id = rest.split(/[/?#]/)[0]!;
      await checkReadable(session, `${parsed.kind}://${id}`);
      const watch = { kind: parsed.kind, id, state: "" };
      watch.state = (await look({}, watch)) as string;
      return watch;
    }
    if (parsed.kind === "hot-state" && parsed.version === "latest" && hotState) {
      // A new version is a new `latest`; numbered versions never change.
      const watch = { kind: "hot-state" as const, version: 0 };
      watch.version = (await look({}, watch)) as number;
      return watch;
    }
    if (parsed.kind === "thread" && threads) {
      const ref = threadRef(parsed.alias);
      if (options.threadUpdates === "poll") {
        return {
          kind: "polled-thread",
          alias: parsed.alias,
          mark: await threadMark(threads, ref, { seen: 0 }),
        };
      }
      return { kind: "thread", stop: await threads.subscribe(ref, () => send(uri)) };
    }
    return { kind: "static" };
  }

  return {
    async subscribe(uri) {
      if (watches.has(uri)) return;
      if (watches.size >= MAX_SUBSCRIPTIONS) {
        parseResourceUri(uri);
        throw new StowageError("TOO_LARGE", `at most ${MAX_SUBSCRIPTIONS} subscriptions per connection`, {
          reason: "TOO_MANY_SUBSCRIPTIONS",
          details: { limit: MAX_SUBSCRIPTIONS },
        });
      }
      const watch = await watchOf(uri);
      if (watches.has(uri)) {
        if (watch.kind === "thread") await watch.stop();
        return;
      }
      watches.set(uri, watch);
      updateTimer();
    },
    async unsubscribe(uri) {
      const watch = watches.get(uri);
      if (!watch) return;
      watches.delete(uri);
      updateTimer();
      if (watch.kind === "thread") await watch.stop();
    },
    async close() {
      const all = [...watches.values()];
      watches.clear();
      updateTimer();
      await Promise.all(all.map((watch) => (watch.kind === "thread" ? watch.stop() : undefined)));
    },
  };
}

/**
 * Refuses a hostile or unreadable id as a read would (INVALID_INPUT, FORBIDDEN), reading one line at
 * most; an output that does not exist yet, or is still being written, may be subscribed to.
 */
async function checkReadable(session: McpSession, url: string): Promise<void> {
  try {
    await session.router.read(url, { offset: 1, limit: 1, allowIncomplete: true, maxBytes: 1024 * 1024 });
  } catch (err) {
    if (
      StowageError.is(err, "NOT_FOUND") ||
      StowageError.is(err, "UNAVAILABLE") ||
      StowageError.is(err, "TOO_LARGE")
    )
      return;
    throw err;
  }
}
