import { randomBytes, randomUUID } from "node:crypto";
import { describeNotifierConformance, expectStowageError } from "@stowage/core/testing";
import { runChild } from "@stowage/test-support";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { StowageConnection } from "../src/database.js";
import { createPostgresNotifier } from "../src/notifier.js";
import { describeBackends } from "./backends.js";

const PUBLISH_CHILD = new URL("./children/publish-notification.ts", import.meta.url);

/** Resolves with the first message `listener` gets, or rejects after `ms`. */
function nextMessage(ms = 10_000) {
  let resolve: (message: string) => void = () => {};
  const received = new Promise<string>((done, fail) => {
    resolve = done;
    setTimeout(() => fail(new Error("no message arrived")), ms).unref();
  });
  return { received, listener: (message: string) => resolve(message) };
}

const uniqueChannel = () => `stowage_test_${randomBytes(5).toString("hex")}`;

describeBackends("postgres notifier", (backend) => {
  describeNotifierConformance({
    name: `postgres notifier on ${backend.name}`,
    createNotifier: () =>
      createPostgresNotifier({ connection: backend.connection(), channel: uniqueChannel() }),
  });

  it("carries newlines, NUL and any topic text; a payload that is not Stowage's is ignored", async () => {
    const channel = uniqueChannel();
    const notifier = createPostgresNotifier({ connection: backend.connection(), channel });
    try {
      const topic = `thread/ü ${randomUUID()}`;
      const messages: string[] = [];
      await notifier.subscribe(topic, (message) => messages.push(message));
      const last = nextMessage();
      await notifier.subscribe(topic, (message) => message === "last" && last.listener(message));
      await backend.connection().db.execute(sql`SELECT pg_notify(${channel}, ${"not a stowage payload"})`);
      for (const message of ["a\nb", "nul\u0000inside", "", "last"]) await notifier.publish(topic, message);
      await last.received;
      expect(messages).toEqual(["a\nb", "nul\u0000inside", "", "last"]);
    } finally {
      await notifier.close();
    }
  });

  it("refuses a malformed channel and a connection Stowage did not open", () => {
    for (const channel of ["", "Stowage", "a-b", "1abc", "a".repeat(64), 'x"; DROP TABLE blobs; --']) {
      expect(() => createPostgresNotifier({ connection: backend.connection(), channel })).toThrow(
        expect.objectContaining({ code: "INVALID_INPUT" }),
      );
    }
    const foreign = { ...backend.connection() } as StowageConnection;
    expect(() => createPostgresNotifier({ connection: foreign })).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
  });

  it("subscribe after close is refused; close twice is harmless", async () => {
    const notifier = createPostgresNotifier({ connection: backend.connection(), channel: uniqueChannel() });
    await notifier.close();
    await notifier.close();
    await expectStowageError(
      notifier.subscribe("t", () => {}),
      "INVALID_INPUT",
    );
  });

  describe.skipIf(backend.name !== "PostgreSQL")("across processes and connections", () => {
    it("a message published by another process reaches a subscriber here", async () => {
      const channel = uniqueChannel();
      const notifier = createPostgresNotifier({ connection: backend.connection(), channel });
      try {
        const topic = `thread/${randomUUID()}`;
        const got = nextMessage();
        await notifier.subscribe(topic, got.listener);
        const child = await runChild(PUBLISH_CHILD, [
          backend.url!,
          backend.schema!,
          channel,
          topic,
          "posted elsewhere",
        ]);
        expect(child.code).toBe(0);
        expect(await got.received).toBe("posted elsewhere");
      } finally {
        await notifier.close();
      }
    });

    it("listens again after its connection is killed", async () => {
      const channel = uniqueChannel();
      const notifier = createPostgresNotifier({ connection: backend.connection(), channel });
      try {
        const topic = `thread/${randomUUID()}`;
        const got = nextMessage(20_000);
        await notifier.subscribe(topic, got.listener);
        const { db } = backend.connection();
        const killed = await db.execute(
          sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = ${`LISTEN "${channel}"`}`,
        );
        expect((killed as { rows: unknown[] }).rows).toHaveLength(1);
        // Messages sent while it is down are lost (at most once): keep announcing until one arrives.
        let arrived = false;
        void got.received.then(() => {
          arrived = true;
        });
        while (!arrived) {
          await notifier.publish(topic, "after reconnect");
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(await got.received).toBe("after reconnect");
      } finally {
        await notifier.close();
      }
    });
  });
});
