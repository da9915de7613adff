import { describeValue, type Logger, type Notifier, type Unsubscribe } from "@stowage/core";
import type { ThreadRef } from "../log/thread-layout.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { type FeedLayout, isItemName, STATUS_MESSAGE } from "./feed-layout.js";
import type { ThreadInfo } from "./thread-record.js";
import { warnFailure } from "./warn-failure.js";

/** Called with each item posted to a thread, by any process sharing the store and the notifier. */
export type ThreadItemListener = (item: ThreadItem) => void;

/** Options of `ThreadFeeds.subscribe`. */
export interface SubscribeOptions {
  /** Called when the thread's status changes (it failed), with its new record. */
  onStatus?: (thread: ThreadInfo) => void;
}

interface Subscriber {
  onItem: ThreadItemListener;
  onStatus: ((thread: ThreadInfo) => void) | undefined;
}

/** One notifier subscription per thread, shared by every listener of that thread in this process. */
interface Channel {
  subscribers: Set<Subscriber>;
  ready: Promise<Unsubscribe>;
  /** The last queued delivery: items reach listeners in the order their notifications came. */
  delivered: Promise<void>;
}

interface ThreadSubscriptionsOptions {
  notifier: Notifier;
  layout: FeedLayout;
  logger: Logger;
  /** The posted item called `name`, or undefined when it is gone or unreadable (the reader warns). */
  readItem(thread: ThreadRef, name: string): Promise<ThreadItem | undefined>;
  readThread(thread: ThreadRef): Promise<ThreadInfo | null>;
}

/** The live side of the feeds: notifications carry an item's name; each is read from the store once and fanned out. */
export interface ThreadSubscriptions {
  subscribe(thread: ThreadRef, listener: ThreadItemListener, options: SubscribeOptions): Promise<Unsubscribe>;
  /** Stops every subscription of this process. */
  close(): Promise<void>;
}

/**
 * Subscriptions over `notifier`: the first listener of a thread opens its topic, the last one to
 * leave closes it; each notification is read once and handed to the thread's listeners in order.
 */
export function createThreadSubscriptions(options: ThreadSubscriptionsOptions): ThreadSubscriptions {
  const { notifier, layout, logger, readItem, readThread } = options;
  const channels = new Map<string, Channel>();

  const warnThrown = (thread: ThreadRef, message: string, err: unknown, details?: Record<string, unknown>) =>
    warnFailure(logger, message, thread, err, details);

  async function deliver(thread: ThreadRef, channel: Channel, message: string): Promise<void> {
    if (message === STATUS_MESSAGE) {
      const watchers = [...channel.subscribers].filter((subscriber) => subscriber.onStatus);
      const info = watchers.length === 0 ? null : await readThread(thread);
      if (info === null) return;
      for (const { onStatus } of watchers) {
        try {
          onStatus?.(info);
        } catch (err) {
          warnThrown(thread, "a thread status listener threw", err);
        }
      }
      return;
    }
    if (!isItemName(message)) {
      logger.warn(
        {
          jobId: thread.jobId,
          alias: thread.alias,
          message: describeValue(message),
        },
        "ignored a thread notification that names no posted item",
      );
      return;
    }
    const item = await readItem(thread, message);
    if (item === undefined) return;
    for (const { onItem } of [...channel.subscribers]) {
      try {
        onItem(item);
      } catch (err) {
        warnThrown(thread, "a thread subscriber threw; the item is posted", err, { itemId: item.id });
      }
    }
  }

  function openChannel(thread: ThreadRef, topic: string): Channel {
    const channel: Channel = {
      subscribers: new Set(),
      ready: Promise.resolve(async () => {}),
      delivered: Promise.resolve(),
    };
    channel.ready = notifier.subscribe(topic, (message) => {
      channel.delivered = channel.delivered
        .then(() => deliver(thread, channel, message))
        .catch((err) => warnThrown(thread, "could not deliver a posted item to subscribers", err));
    });
    channels.set(topic, channel);
    channel.ready.catch(() => {
      if (channels.get(topic) === channel) channels.delete(topic);
    });
    return channel;
  }

  async function subscribe(
    thread: ThreadRef,
    listener: ThreadItemListener,
    { onStatus }: SubscribeOptions,
  ): Promise<Unsubscribe> {
    const topic = layout.topic(thread);
    const channel = channels.get(topic) ?? openChannel(thread, topic);
    const subscriber: Subscriber = { onItem: listener, onStatus };
    channel.subscribers.add(subscriber);
    try {
      await channel.ready;
    } catch (err) {
      channel.subscribers.delete(subscriber);
      throw err;
    }
    let subscribed = true;
    return async () => {
      if (!subscribed) return;
      subscribed = false;
      channel.subscribers.delete(subscriber);
      if (channel.subscribers.size > 0 || channels.get(topic) !== channel) return;
      channels.delete(topic);
      await (await channel.ready)();
    };
  }

  async function close(): Promise<void> {
    const open = [...channels.values()];
    channels.clear();
    for (const channel of open) channel.subscribers.clear();
    await Promise.allSettled(open.map(async (channel) => (await channel.ready)()));
  }

  return { subscribe, close };
}
