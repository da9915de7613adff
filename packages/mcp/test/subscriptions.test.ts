// Subscriptions that poll: threads whose notifier does not reach the poster (another process on
// the same store), and the cost of a tick with many watches.
import { setTimeout as sleep } from "node:timers/promises";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { createMemoryNotifier } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { createThreadFeeds, textItem } from "@stowage/thread-items";
import { afterEach, describe, expect, it } from "vitest";
import { connectInMemory, SESSION_ID, sessionFixture, stowageErrorOf } from "./session-fixture.js";

const base = await tempDirectory("stowage-mcp-subscriptions-");
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('threadUpdates: "poll"', () => {
  it("notifies a thread posted to by feeds whose notifier the server never hears", async () => {
    const fixture = await sessionFixture(base, { threadUpdates: "poll" });
    // The poster: the same store, its own notifier, as another process would be.
    const poster = createThreadFeeds({
      store: fixture.shared,
      prefix: "threads",
      notifier: createMemoryNotifier(),
    });
    closers.push(() => poster.close());
    const { client, close } = await connectInMemory(fixture.options);
    closers.push(close);
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await client.subscribeResource({ uri: "thread://main" });
    await client.subscribeResource({ uri: "thread://later" });
    await sleep(100);
    expect(updated).toEqual([]);
    await poster.post({ jobId: SESSION_ID, alias: "main" }, textItem("third"), { author: "user:alice" });
    await expect.poll(() => updated, { timeout: 30_000 }).toEqual(["thread://main"]);
    // A thread that had no post yet is told of its first one.
    await poster.post({ jobId: SESSION_ID, alias: "later" }, textItem("first"), { author: "user:alice" });
    await expect.poll(() => updated, { timeout: 30_000 }).toEqual(["thread://main", "thread://later"]);
    // Ten more posts in one go are told, and then quiet.
    for (let n = 0; n < 10; n++) {
      await poster.post({ jobId: SESSION_ID, alias: "main" }, textItem(`more ${n}`), {
        author: "user:alice",
      });
    }
    await expect.poll(() => updated.length, { timeout: 30_000 }).toBeGreaterThan(2);
    await sleep(150);
    const settled = updated.length;
    await sleep(150);
    expect(updated.length).toBe(settled);
    await client.unsubscribeResource({ uri: "thread://main" });
    await poster.post({ jobId: SESSION_ID, alias: "main" }, textItem("unheard"), { author: "user:alice" });
    await sleep(150);
    expect(updated.length).toBe(settled);
  });
});

describe("polling cost", () => {
  it("lists the artifacts once per tick, however many are watched", async () => {
    const fixture = await sessionFixture(base, { pollIntervalMs: 20 });
    let listings = 0;
    const artifacts = fixture.session.artifacts;
    const counted = {
      ...fixture.session,
      artifacts: Object.assign(Object.create(artifacts), {
        listArtifacts: (...args: Parameters<typeof artifacts.listArtifacts>) => {
          listings++;
          return artifacts.listArtifacts(...args);
        },
      }) as typeof artifacts,
    };
    const { client, close } = await connectInMemory({ ...fixture.options, session: counted });
    closers.push(close);
    for (let id = 0; id < 50; id++) await client.subscribeResource({ uri: `artifact://${id}` });
    listings = 0;
    const started = Date.now();
    await sleep(400);
    const ticks = (Date.now() - started) / 20;
    // Before: one listing per watch per tick, 50 a tick.
    expect(listings).toBeGreaterThan(0);
    expect(listings).toBeLessThanOrEqual(Math.ceil(ticks) + 1);
  });
});

describe("subscriptions per connection", () => {
  it("takes 256 and refuses the 257th, saying the limit", async () => {
    const fixture = await sessionFixture(base);
    const { client, close } = await connectInMemory(fixture.options);
    closers.push(close);
    for (let id = 0; id < 256; id++) await client.subscribeResource({ uri: `artifact://${id}` });
    const err = await expectStowageError(
      () => stowageErrorOf(client.subscribeResource({ uri: "artifact://256" })),
      "TOO_LARGE",
      "TOO_MANY_SUBSCRIPTIONS",
    );
    expect(err.details).toEqual({ limit: 256 });
    // One already held is not counted twice.
    await client.subscribeResource({ uri: "artifact://0" });
  });
});
