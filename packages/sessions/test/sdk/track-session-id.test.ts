import { StowageError } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { sessionIdFromMessage, trackSessionId } from "../../src/sdk/track-session-id.js";

const first = "6e7f8091-a2b3-4c4d-8e5f-60718293a4b5";
const second = "7f8091a2-b3c4-4d5e-9f60-718293a4b5c6";

async function* messages(items: unknown[]) {
  for (const item of items) yield item;
}

describe("trackSessionId", () => {
  it("passes every message through and keeps the first system/init session id", async () => {
    const stream = [
      { type: "system", subtype: "hook_response" },
      { type: "system", subtype: "init", session_id: first, tools: [] },
      { type: "assistant", session_id: first },
      { type: "system", subtype: "init", session_id: second },
      { type: "result", subtype: "success" },
    ];
    const tracked = trackSessionId(messages(stream));
    expect(tracked.sessionId).toBeUndefined();
    const seen: unknown[] = [];
    for await (const message of tracked) seen.push(message);
    expect(seen).toEqual(stream);
    expect(tracked.sessionId).toBe(first);
  });

  it("stays undefined when no init message arrives", async () => {
    const tracked = trackSessionId(messages([{ type: "assistant" }, null, "text", 7]));
    for await (const _ of tracked) {
    }
    expect(tracked.sessionId).toBeUndefined();
  });

  it("rejects an init message whose session id is not a safe id", async () => {
    for (const bad of ["../x", "", 42, undefined, "a".repeat(129), "a b"]) {
      expect(() => sessionIdFromMessage({ type: "system", subtype: "init", session_id: bad })).toThrow(
        StowageError,
      );
    }
    const tracked = trackSessionId(messages([{ type: "system", subtype: "init", session_id: "../../etc" }]));
    const err = await (async () => {
      for await (const _ of tracked) {
      }
    })().catch((e: unknown) => e);
    expect(StowageError.is(err, "INVALID_INPUT")).toBe(true);
  });
});
