import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";
import type { OperationOptions } from "./object-store.js";

/** Longest topic accepted, in characters. */
export const MAX_NOTIFY_TOPIC_LENGTH = 512;
/** Longest message accepted, in UTF-8 bytes: a pointer to what changed, never the thing itself. */
export const MAX_NOTIFY_MESSAGE_BYTES = 4000;

/** Stops a subscription; calling it twice is harmless. */
export type Unsubscribe = () => Promise<void>;

/**
 * Small messages to whoever listens on a topic, in this process or (for a shared notifier, such
 * as PostgreSQL's LISTEN/NOTIFY in `@stowage/storage-postgres`) in every process on the same
 * backend. Delivery is at most once and only to subscribers present when the message is sent:
 * a message says "look again", the state itself lives in a store.
 */
export interface Notifier {
  publish(topic: string, message: string, options?: OperationOptions): Promise<void>;
  /** Calls `listener` with every message published on `topic` from now on. */
  subscribe(
    topic: string,
    listener: (message: string) => void,
    options?: OperationOptions,
  ): Promise<Unsubscribe>;
  /** Stops every subscription and releases the connection, where there is one. */
  close(): Promise<void>;
  /** `close()`, for `await using notifier = …`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Throws INVALID_INPUT unless `topic` and `message` are within the limits every notifier keeps. */
export function assertNotification(topic: unknown, message?: unknown): void {
  if (
    typeof topic !== "string" ||
    topic.length === 0 ||
    topic.length > MAX_NOTIFY_TOPIC_LENGTH ||
    /[\u0000-\u001f\u007f]/.test(topic)
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `topic must be 1 to ${MAX_NOTIFY_TOPIC_LENGTH} characters without control characters, got ${describeValue(topic)}`,
      typeof topic === "string" && topic.length > MAX_NOTIFY_TOPIC_LENGTH
        ? { details: { limit: MAX_NOTIFY_TOPIC_LENGTH } }
        : {},
    );
  }
  if (message === undefined) return;
  if (typeof message !== "string" || Buffer.byteLength(message) > MAX_NOTIFY_MESSAGE_BYTES) {
    throw new StowageError(
      "INVALID_INPUT",
      `message must be a string of at most ${MAX_NOTIFY_MESSAGE_BYTES} UTF-8 bytes, got ${describeValue(message)}`,
      typeof message === "string" ? { details: { limit: MAX_NOTIFY_MESSAGE_BYTES } } : {},
    );
  }
}

/** A notifier within this process: the reference, and the one an embedded single-process app uses. */
export function createMemoryNotifier(): Notifier {
  const listeners = new Map<string, Set<(message: string) => void>>();
  return {
    async publish(topic, message) {
      assertNotification(topic, message);
      for (const listener of [...(listeners.get(topic) ?? [])]) {
        try {
          listener(message);
        } catch {
          // One broken subscriber must not stop the others or the publisher.
        }
      }
    },
    async subscribe(topic, listener) {
      assertNotification(topic);
      let set = listeners.get(topic);
      if (!set) {
        set = new Set();
        listeners.set(topic, set);
      }
      set.add(listener);
      return async () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(topic) === set) listeners.delete(topic);
      };
    },
    async close() {
      listeners.clear();
    },
    async [Symbol.asyncDispose]() {
      listeners.clear();
    },
  };
}
