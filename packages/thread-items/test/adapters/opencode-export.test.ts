import { countTokensExact } from "@stowage/hot-state";
import { describe, expect, it } from "vitest";
import { conversationHistory, opencodeExportItems } from "../../src/index.js";

// The shape `opencode export <id>` prints (OpenCode 1.x): { info, messages: [{ info: { role }, parts }] },
// parts typed text, reasoning, tool ({ callID, tool, state: { status, input, output | error } }),
// file ({ mime, filename, url }), step-start, step-finish…, written here by hand.
const ids = (message: string) => ({ sessionID: "ses_1", messageID: message });
const exported = {
  info: { id: "ses_1", version: "1.18.2", title: "launch" },
  messages: [
    {
      info: { id: "msg_1", sessionID: "ses_1", role: "user" },
      parts: [
        { id: "prt_1", ...ids("msg_1"), type: "text", text: "Remember: the launch code is ZEBRA-1187." },
        {
          id: "prt_2",
          ...ids("msg_1"),
          type: "file",
          mime: "image/png",
          filename: "shot.png",
          url: "data:image/png;base64,iVBORw0KGgoAAAA=",
        },
        {
          id: "prt_3",
          ...ids("msg_1"),
          type: "text",
          text: "contents of a.ts read for the mention",
          synthetic: true,
        },
      ],
    },
    {
      info: { id: "msg_2", sessionID: "ses_1", role: "assistant" },
      parts: [
        { id: "prt_4", ...ids("msg_2"), type: "step-start" },
        { id: "prt_5", ...ids("msg_2"), type: "reasoning", text: "store it" },
        {
          id: "prt_6",
          ...ids("msg_2"),
          type: "tool",
          tool: "bash",
          callID: "call_1",
          state: { status: "completed", input: { command: "echo ok" }, output: "ok\n", title: "echo" },
        },
        {
          id: "prt_7",
          ...ids("msg_2"),
          type: "tool",
          tool: "read",
          callID: "call_2",
          state: { status: "error", input: { filePath: "/nope" }, error: "File not found" },
        },
        { id: "prt_8", ...ids("msg_2"), type: "text", text: "Noted: ZEBRA-1187." },
        { id: "prt_9", ...ids("msg_2"), type: "step-finish", tokens: { input: 10, output: 3 } },
      ],
    },
    { info: { id: "msg_3", sessionID: "ses_1", role: "system" }, parts: [{ type: "text", text: "hidden" }] },
  ],
};

describe("opencodeExportItems", () => {
  it("reads an export's messages into thread items a history can use", () => {
    const items = opencodeExportItems(JSON.stringify(exported));
    expect(items.map((item) => [item.metadata?.type ?? "post", item.content[0]!.text])).toEqual([
      ["post", "Remember: the launch code is ZEBRA-1187."],
      ["post", "[image: image/png, 11 bytes]"],
      ["thinking", "[thinking] store it"],
      ["tool_call", "bash → echo ok"],
      ["tool_result", "→ ok (1 line)"],
      ["tool_call", "read → /nope"],
      ["tool_result", "→ File not found (1 line)"],
      ["text", "Noted: ZEBRA-1187."],
    ]);
    const history = conversationHistory(items, { countTokens: countTokensExact });
    expect(history.text).toBe(
      [
        "Earlier conversation (all 5 messages), oldest first:",
        "User:\nRemember: the launch code is ZEBRA-1187.",
        "User:\n[image: image/png, 11 bytes]",
        "Assistant (tool): bash → echo ok → ok (1 line)",
        "Assistant (tool): read → /nope → File not found (1 line) [error]",
        "Assistant:\nNoted: ZEBRA-1187.",
      ].join("\n\n"),
    );
  });

  it("takes bytes and parsed values too", () => {
    const bytes = new TextEncoder().encode(JSON.stringify(exported));
    expect(opencodeExportItems(bytes)).toEqual(opencodeExportItems(exported));
  });

  it("refuses what is not an export with INVALID_INPUT (BAD_OPENCODE_EXPORT); skips odd parts", () => {
    for (const bad of [
      "{",
      new Uint8Array([0xff, 0xfe]),
      "[]",
      "null",
      { info: {} },
      { messages: [null] },
      { messages: [{ info: {}, parts: {} }] },
    ]) {
      try {
        opencodeExportItems(bad);
        expect.unreachable(String(bad));
      } catch (err) {
        expect((err as { code?: string }).code).toBe("INVALID_INPUT");
        expect((err as { reason?: string }).reason).toBe("BAD_OPENCODE_EXPORT");
      }
    }
    const odd = {
      messages: [
        {
          info: { role: "assistant" },
          parts: [
            null,
            7,
            { type: "tool" },
            { type: "tool", tool: "x", callID: "c", state: "??" },
            { type: "text", text: 5 },
            { type: "mystery" },
          ],
        },
      ],
    };
    expect(opencodeExportItems(odd).map((item) => item.content[0]!.text)).toEqual(["x"]);
  });
});
