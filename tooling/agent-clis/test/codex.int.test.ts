import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  createAgentContainer,
  installAgentCli,
  requestsMention,
  runCodex,
  startResponsesMock,
} from "../src/index.js";

const cli = await installAgentCli("codex");
const root = await tempDirectory("stowage-codex-cli-");

describe.skipIf(!cli.ready)("Codex against the Responses mock", () => {
  it("resumes a session: the resumed request carries the first prompt and the first reply", async () => {
    const mock = await startResponsesMock();
    onTestFinished(() => mock.close());
    const { home, cwd } = await createAgentContainer(root, "resume");

    const first = await runCodex({
      cli,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: "Remember: the code word is PELICAN-42.",
    });
    expect(first.code, first.report).toBe(0);
    expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.stdout).toContain("mock reply 0: received");
    const firstCount = mock.requests.length;
    expect(requestsMention(mock.requests, "PELICAN-42")).toBe(true);

    // The rollout is where Codex's public layout says: sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl.
    const sessions = join(home, ".codex", "sessions");
    const rollouts = (await readdir(sessions, { recursive: true })).filter((path) => path.endsWith(".jsonl"));
    expect(rollouts).toHaveLength(1);
    expect(rollouts[0]).toMatch(new RegExp(`^\\d{4}/\\d{2}/\\d{2}/rollout-.+-${first.sessionId}\\.jsonl$`));

    const second = await runCodex({
      cli,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: "What was the code word?",
      resume: first.sessionId,
    });
    expect(second.code, second.report).toBe(0);
    expect(second.sessionId).toBe(first.sessionId);
    const resumed = mock.requests.slice(firstCount);
    expect(requestsMention(resumed, "What was the code word?")).toBe(true);
    expect(requestsMention(resumed, "PELICAN-42")).toBe(true);
    expect(requestsMention(resumed, "mock reply 0: received")).toBe(true);
  });
});
