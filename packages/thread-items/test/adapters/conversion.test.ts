import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createCodexRolloutConverter } from "../../src/adapters/codex-rollout.js";
import { convertTranscript } from "../../src/adapters/conversion.js";
import { createPiSessionConverter } from "../../src/adapters/pi-session.js";

describe("convertTranscript", () => {
  it("runs every line of the input through the converter it is given, then ends it", () => {
    const text = [
      JSON.stringify({ type: "session", version: 3, id: "s-1", timestamp: "2026-01-01T00:00:00.000Z" }),
      JSON.stringify({
        type: "message",
        id: "m-1",
        timestamp: "2026-01-01T00:00:01.000Z",
        message: { role: "user", content: "hello" },
      }),
      "not json",
      JSON.stringify({
        type: "message",
        id: "m-2",
        timestamp: "2026-01-01T00:00:02.000Z",
        message: { role: "assistant", content: [{ type: "text", text: "hi" }], stopReason: "stop" },
      }),
    ].join("\n");
    const { items, problems, sessionId } = convertTranscript(text, createPiSessionConverter());
    expect(items.map((item) => item.content[0]?.text)).toEqual([
      "Session started",
      "hello",
      "hi",
      "Turn complete",
    ]);
    expect(problems).toEqual([{ line: 3, message: expect.stringContaining("not valid JSON") }]);
    expect(sessionId).toBe("s-1");
  });

  it.each([
    ["nothing", undefined],
    ["a format's name", "codex"],
    ["an object without push and end", {}],
    ["a converter factory instead of a converter", createCodexRolloutConverter],
    ["an object with push only", { push: () => [] }],
  ])("refuses %s as the converter", async (_what, converter) => {
    await expectStowageError(() => convertTranscript("", converter as never), "INVALID_INPUT");
  });
});
