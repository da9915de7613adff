import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { SESSION_ACTIVITY_PREFIX, sessionActivityOf } from "../../src/shared/session-activity.js";

const alice = { kind: "user", id: "alice" } as const;
const bob = { kind: "user", id: "bob" } as const;

const entry = (requestId: string, sessionId: string, at: string) => ({
  sessionId,
  requestId,
  agent: "codex",
  agentVersion: "0.169.0",
  fileCount: 2,
  rawBytes: 2048,
  storedBytes: 512,
  durationMs: 7,
  at,
});

describe("sessionActivityOf", () => {
  it("keeps the last capture and the last restore of a request apart, the last write winning", async () => {
    const store = createMemoryObjectStore();
    const activity = sessionActivityOf(store, SESSION_ACTIVITY_PREFIX, alice);
    expect(await activity.read("req-1")).toEqual({ lastCapture: null, lastRestore: null });
    await activity.record("capture", entry("req-1", "s-1", "2026-01-01T00:00:00.000Z"));
    await activity.record("restore", entry("req-1", "s-1", "2026-01-01T00:01:00.000Z"));
    await activity.record("capture", entry("req-1", "s-2", "2026-01-01T00:02:00.000Z"));
    expect(await activity.read("req-1")).toEqual({
      lastCapture: entry("req-1", "s-2", "2026-01-01T00:02:00.000Z"),
      lastRestore: entry("req-1", "s-1", "2026-01-01T00:01:00.000Z"),
    });
    // Another principal's view of the same request holds nothing.
    expect(await sessionActivityOf(store, SESSION_ACTIVITY_PREFIX, bob).read("req-1")).toEqual({
      lastCapture: null,
      lastRestore: null,
    });
  });

  it("forgets a request's records, and a session's records whatever request they were for", async () => {
    const activity = sessionActivityOf(createMemoryObjectStore(), SESSION_ACTIVITY_PREFIX, alice);
    const at = "2026-01-01T00:00:00.000Z";
    await activity.record("capture", entry("req-1", "s-1", at));
    await activity.record("restore", entry("req-2", "s-1", at));
    await activity.record("capture", entry("req-3", "s-3", at));
    expect(await activity.deleteForSession("s-1")).toBe(2);
    expect(await activity.deleteForSession("s-1")).toBe(0);
    expect((await activity.read("req-3")).lastCapture).toEqual(entry("req-3", "s-3", at));
    expect(await activity.deleteForRequest("req-3")).toBe(true);
    expect(await activity.deleteForRequest("req-3")).toBe(false);
    expect(await activity.read("req-3")).toEqual({ lastCapture: null, lastRestore: null });
  });

  it("refuses a request id that is not one key segment, and a stored record that is not one", async () => {
    const store = createMemoryObjectStore();
    const activity = sessionActivityOf(store, SESSION_ACTIVITY_PREFIX, alice);
    for (const requestId of ["../bob", "a/b", "", "r".repeat(256)]) {
      await expectStowageError(activity.read(requestId), "INVALID_INPUT");
    }
    await store.put(`${SESSION_ACTIVITY_PREFIX}user/alice/req-1/capture.json`, new TextEncoder().encode("{"));
    await expectStowageError(activity.read("req-1"), "INTEGRITY");
    await store.put(
      `${SESSION_ACTIVITY_PREFIX}user/alice/req-1/capture.json`,
      new TextEncoder().encode(JSON.stringify({ ...entry("req-1", "s", "t"), fileCount: -1 })),
    );
    await expectStowageError(activity.read("req-1"), "INTEGRITY");
  });
});
