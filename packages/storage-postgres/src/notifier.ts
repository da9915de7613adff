import { assertNotification, describeValue, type Notifier, StowageError } from "@stowage/core";
import { sql } from "drizzle-orm";
import type { StowageConnection } from "./database.js";
import { type ListenSession, listenSessionsOf } from "./listen-sessions.js";
import { runDatabase } from "./run-database.js";

/** The NOTIFY channel when none is given. Deployments sharing one database give each its own. */
const DEFAULT_NOTIFY_CHANNEL = "stowage";
/** A channel name: an unquoted PostgreSQL identifier, 1 to 63 characters. */
const CHANNEL_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;
/** First and longest wait before opening a lost LISTEN connection again. */
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5000;

/** Options of {@link createPostgresNotifier}. */
export interface PostgresNotifierOptions {
  /** A connection from `connectPostgres` or `connectEmbedded`: its pool publishes, a connection of its own listens. */
  connection: StowageConnection;
  /** The one channel every topic travels on. Default `stowage`. */
  channel?: string;
}

// One channel carries every topic: the payload is a format letter, the topic (no control
// characters, so no newline), a newline, then the message: as is ("t"), or as base64 of its
// UTF-8 ("b") when it holds a NUL, which PostgreSQL text cannot. The largest, 512 topic units and
// 4000 message bytes in base64, is under 7,000 bytes: within NOTIFY's 8,000.
function encode(topic: string, message: string): string {
  return message.includes("\u0000")
    ? `b${topic}\n${Buffer.from(message).toString("base64")}`
    : `t${topic}\n${message}`;
}

function decode(payload: string): { topic: string; message: string } | undefined {
  const newline = payload.indexOf("\n");
  const format = payload[0];
  if (newline < 1 || (format !== "t" && format !== "b")) return undefined; // not ours
  const body = payload.slice(newline + 1);
  return {
    topic: payload.slice(1, newline),
    message: format === "b" ? Buffer.from(body, "base64").toString() : body,
  };
}

/**
 * Core's `Notifier` over PostgreSQL `LISTEN`/`NOTIFY`: a message published by any process on the
 * database reaches the subscribers of every process. Publishing goes through the connection's
 * pool (`pg_notify`); listening holds one connection of its own, opened at the first subscribe
 * beside the pool (node-postgres) and opened again after it drops (100 ms, doubling to 5 s;
 * messages sent while it is down are lost, as the contract allows). On PGlite the same runs
 * inside the process, which is the only one a data directory allows. `close` ends the listening
 * connection, not the `StowageConnection`.
 */
export function createPostgresNotifier(options: PostgresNotifierOptions): Notifier {
  const { connection } = options ?? ({} as PostgresNotifierOptions);
  const openSession = connection ? listenSessionsOf(connection) : undefined;
  if (!openSession) {
    throw new StowageError(
      "INVALID_INPUT",
      `createPostgresNotifier: connection must come from connectPostgres or connectEmbedded, got ${describeValue(connection)}`,
    );
  }
  const channel = options.channel ?? DEFAULT_NOTIFY_CHANNEL;
  if (typeof channel !== "string" || !CHANNEL_PATTERN.test(channel)) {
    throw new StowageError(
      "INVALID_INPUT",
      `createPostgresNotifier: channel must be 1 to 63 of a-z, 0-9 and _, not starting with a digit, got ${describeValue(channel)}`,
    );
  }
  const listeners = new Map<string, Set<(message: string) => void>>();
  let session: ListenSession | undefined;
  let opening: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = RECONNECT_FIRST_MS;
  let closed = false;

  function deliver(payload: string): void {
    const decoded = decode(payload);
    if (!decoded) return;
    for (const listener of [...(listeners.get(decoded.topic) ?? [])]) {
      try {
        listener(decoded.message);
      } catch {
        // One broken subscriber must not stop the others.
      }
    }
  }

  function reconnectLater(): void {
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      listen().then(
        () => {
          retryMs = RECONNECT_FIRST_MS;
        },
        () => {
          retryMs = Math.min(retryMs * 2, RECONNECT_MAX_MS);
          reconnectLater();
        },
      );
    }, retryMs);
    retryTimer.unref();
  }

  /** Opens the listening connection unless it is open or opening. */
  function listen(): Promise<void> {
    if (session) return Promise.resolve();
    opening ??= openSession!(channel, {
      onMessage: deliver,
      onLost: () => {
        session = undefined;
        reconnectLater();
      },
    }).then(
      async (opened) => {
        opening = undefined;
        if (closed) await opened.close();
        else session = opened;
      },
      (err: unknown) => {
        opening = undefined;
        throw err;
      },
    );
    return opening;
  }

  const notifier: Notifier = {
    async publish(topic, message, { signal } = {}) {
      assertNotification(topic, message);
      const payload = encode(topic, message);
      await runDatabase(`notify ${topic}`, signal, () =>
        connection.db.execute(sql`SELECT pg_notify(${channel}, ${payload})`),
      );
    },

    async subscribe(topic, listener) {
      assertNotification(topic);
      if (closed) throw new StowageError("INVALID_INPUT", "subscribe on a closed notifier");
      let set = listeners.get(topic);
      if (!set) {
        set = new Set();
        listeners.set(topic, set);
      }
      // A fresh function per subscription: the same listener subscribed twice is two subscriptions.
      const entry = (message: string) => listener(message);
      set.add(entry);
      const unsubscribe = async () => {
        set.delete(entry);
        if (set.size === 0 && listeners.get(topic) === set) listeners.delete(topic);
      };
      try {
        await listen();
      } catch (err) {
        await unsubscribe();
        throw err;
      }
      return unsubscribe;
    },

    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(retryTimer);
      listeners.clear();
      await opening?.catch(() => {});
      await session?.close();
      session = undefined;
    },
    [Symbol.asyncDispose]: () => notifier.close(),
  };
  return notifier;
}
