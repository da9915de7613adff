import { randomUUID } from "node:crypto";
import { MAX_NOTIFY_MESSAGE_BYTES, type Notifier } from "../notifier.js";
import { expectStowageError } from "./expect-stowage-error.js";
import { loadVitest } from "./load-vitest.js";

const { afterEach, beforeEach, describe, expect, it } = await loadVitest("@stowage/core/testing");

export interface NotifierConformanceOptions {
  /** Suite title, e.g. `postgres notifier`. */
  name: string;
  /** A fresh notifier for one test. */
  createNotifier(): Notifier | Promise<Notifier>;
  /** When set, the suite is skipped and this reason printed. */
  skip?: string;
}

/** Resolves with the first `count` messages `listen` receives, or rejects after `ms`. */
function collect(count: number, ms = 5000) {
  const received: string[] = [];
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve, reject) => {
    done = resolve;
    setTimeout(
      () =>
        reject(new Error(`received ${received.length} of ${count} messages: ${JSON.stringify(received)}`)),
      ms,
    ).unref();
  });
  return {
    received,
    listener: (message: string) => {
      received.push(message);
      if (received.length >= count) done();
    },
    finished,
  };
}

const settle = (ms = 300) => new Promise((resolve) => setTimeout(resolve, ms));

/** The behaviour every `Notifier` must have; a shared one adds its cross-process tests. */
export function describeNotifierConformance(options: NotifierConformanceOptions): void {
  if (options.skip) {
    console.warn(`[stowage] ${options.name} conformance skipped: ${options.skip}`);
    describe.skip(`${options.name} conformance (skipped: ${options.skip})`, () => {
      it("needs its backend", () => {});
    });
    return;
  }

  describe(`${options.name} conformance`, () => {
    let notifier: Notifier;
    let topic: string;
    beforeEach(async () => {
      notifier = await options.createNotifier();
      topic = `t/${randomUUID()}`;
    });
    afterEach(() => notifier.close());

    it("delivers each message to every subscriber of its topic, in order", async () => {
      const first = collect(3);
      const second = collect(3);
      await notifier.subscribe(topic, first.listener);
      await notifier.subscribe(topic, second.listener);
      for (const message of ["a", "b", "c"]) await notifier.publish(topic, message);
      await Promise.all([first.finished, second.finished]);
      expect(first.received).toEqual(["a", "b", "c"]);
      expect(second.received).toEqual(["a", "b", "c"]);
    });

    it("keeps topics apart, and stops delivering after unsubscribe", async () => {
      const mine = collect(1);
      const other: string[] = [];
      const unsubscribe = await notifier.subscribe(topic, mine.listener);
      await notifier.subscribe(`${topic}-other`, (message) => other.push(message));
      await notifier.publish(topic, "for me");
      await mine.finished;
      await unsubscribe();
      await unsubscribe();
      await notifier.publish(topic, "too late");
      await settle();
      expect(mine.received).toEqual(["for me"]);
      expect(other).toEqual([]);
    });

    it("Symbol.asyncDispose closes it like close(): nothing is delivered after, and closing again is safe", async () => {
      const other = await options.createNotifier();
      const received: string[] = [];
      await other.subscribe(topic, (message) => received.push(message));
      await other[Symbol.asyncDispose]();
      await other.close();
      await notifier.publish(topic, "after dispose");
      await settle();
      expect(received).toEqual([]);
    });

    it("a subscriber that throws does not stop the others or the publisher", async () => {
      const healthy = collect(2);
      await notifier.subscribe(topic, () => {
        throw new Error("broken subscriber");
      });
      await notifier.subscribe(topic, healthy.listener);
      await notifier.publish(topic, "one");
      await notifier.publish(topic, "two");
      await healthy.finished;
      expect(healthy.received).toEqual(["one", "two"]);
    });

    it("carries any text up to the size limit, and refuses more", async () => {
      const text = `ünïcødé ${"x".repeat(MAX_NOTIFY_MESSAGE_BYTES - 20)}`;
      const got = collect(1);
      await notifier.subscribe(topic, got.listener);
      await notifier.publish(topic, text);
      await got.finished;
      expect(got.received).toEqual([text]);
      await expectStowageError(
        notifier.publish(topic, "x".repeat(MAX_NOTIFY_MESSAGE_BYTES + 1)),
        "INVALID_INPUT",
      );
    });

    it.each([
      ["", "empty"],
      ["a\u0000b", "NUL"],
      ["a\nb", "a newline"],
      ["x".repeat(600), "too long"],
      [42, "a number"],
    ])("refuses the topic %j (%s)", async (bad, _why) => {
      await expectStowageError(notifier.publish(bad as string, "m"), "INVALID_INPUT");
      await expectStowageError(
        notifier.subscribe(bad as string, () => {}),
        "INVALID_INPUT",
      );
    });
  });
}
