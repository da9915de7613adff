import { randomUUID } from "node:crypto";
import { startResponsesMock } from "@stowage/agent-clis";
import { createFsObjectStore } from "@stowage/storage-fs";
import { runChild, tempDirectory } from "@stowage/test-support";
import { expect, it } from "vitest";
import { createObjectAgentsSession } from "../../src/openai-agents/create-object-agents-session.js";

const child = new URL("../children/openai-agents-turn.ts", import.meta.url);

it("an Agents SDK Runner continues a conversation in a second process from the object session", async () => {
  const mock = await startResponsesMock();
  try {
    const root = await tempDirectory("stowage-agents-runner-");
    const sessionId = randomUUID();
    const env = { ...process.env, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${mock.url}/v1` };

    const first = await runChild(child, [root, sessionId, "my name is Ada"], { env });
    expect(first, first.stderr).toMatchObject({ code: 0 });
    const second = await runChild(child, [root, sessionId, "what is my name?"], { env });
    expect(second, second.stderr).toMatchObject({ code: 0 });

    // The mock's default reply counts the input items it was sent: the second turn carried the first.
    expect(JSON.parse(first.stdout).finalOutput).toBe("mock reply 0: received 1 input items");
    expect(JSON.parse(second.stdout).finalOutput).toBe("mock reply 1: received 3 input items");
    const items = await createObjectAgentsSession({
      store: createFsObjectStore({ root }),
      sessionId,
    }).getItems();
    expect(items).toMatchObject([
      { role: "user", content: "my name is Ada" },
      { role: "assistant", content: [{ type: "output_text", text: "mock reply 0: received 1 input items" }] },
      { role: "user", content: "what is my name?" },
      { role: "assistant", content: [{ type: "output_text", text: "mock reply 1: received 3 input items" }] },
    ]);
  } finally {
    await mock.close();
  }
}, 60_000);
