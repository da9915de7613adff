import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/test-app.js";

// What a load balancer and an orchestrator see: /healthz (alive), /readyz (its three checks), and
// a stop that ends every thread tail with `resync` (reason SERVER_SHUTTING_DOWN), so the client
// tails again elsewhere, instead of cutting it.
describe("health and stopping", () => {
  it("/healthz and /readyz answer without a key; /readyz names its three checks", async () => {
    const app = await startTestApp();
    try {
      expect((await app.call("/healthz")).status).toBe(200);
      const ready = await app.call("/readyz");
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        ready: true,
        checks: { database: "ok", shared: "ok", notifier: "ok" },
      });
    } finally {
      await app.close();
    }
  });

  it("a stop ends a thread's live tail with resync, reason SERVER_SHUTTING_DOWN, and the stream closes", async () => {
    const app = await startTestApp({ STOWAGE_SHUTDOWN_GRACE_SECONDS: "5" });
    const key = await app.keyFor({ kind: "user", id: "drained" });
    const jobId = `job-${randomUUID()}`;
    const tail = await fetch(`${app.url}/threads/${jobId}/main/events`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(tail.status).toBe(200);
    const reader = tail.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = (await reader.read()).value ?? ""; // `ready`
    const closing = app.close();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await closing;
    const resync = text.split("\n\n").find((event) => event.startsWith("event: resync"));
    expect(resync, text).toBeDefined();
    const data = JSON.parse(
      resync!
        .split("\n")
        .find((line) => line.startsWith("data: "))!
        .slice(6),
    );
    expect(data).toEqual({ jobId, alias: "main", reason: "SERVER_SHUTTING_DOWN" });
  });
});
