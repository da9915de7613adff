import { existsSync } from "node:fs";
import { join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  createAgentContainer,
  installAgentCli,
  requestsMention,
  runOpenCode,
  startChatMock,
} from "../src/index.js";

const cli = await installAgentCli("opencode");
const root = await tempDirectory("stowage-opencode-cli-");

describe.skipIf(!cli.ready)("OpenCode against the chat completions mock", () => {
  it("continues a session: the continued request carries the first prompt and the first reply", async () => {
    const mock = await startChatMock();
    onTestFinished(() => mock.close());
    const { home, cwd } = await createAgentContainer(root, "resume");

    const first = await runOpenCode({
      cli,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: "Remember: the code word is PELICAN-42.",
    });
    expect(first.code, first.report).toBe(0);
    // OpenCode's session ids are `ses_` + base62, not UUIDs.
    expect(first.sessionId).toMatch(/^ses_[0-9A-Za-z]+$/);
    expect(existsSync(join(home, ".local", "share", "opencode", "opencode.db"))).toBe(true);
    const firstCount = mock.requests.length;
    // OpenCode also asks the model for a title: the answer to the prompt is one of the requests.
    expect(requestsMention(mock.requests, "PELICAN-42")).toBe(true);

    const second = await runOpenCode({
      cli,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: "What was the code word?",
      resume: first.sessionId,
    });
    expect(second.code, second.report).toBe(0);
    expect(second.sessionId).toBe(first.sessionId);
    const answering = mock.requests
      .slice(firstCount)
      .filter((request) => requestsMention([request], "What was the code word?"));
    expect(answering.length).toBeGreaterThan(0);
    expect(requestsMention(answering, "PELICAN-42")).toBe(true);
    expect(requestsMention(answering, "mock reply")).toBe(true);
  });
});
