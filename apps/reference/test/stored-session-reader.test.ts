// A stored session read as it was captured: its transcripts as threads through thread-items'
// adapters (paged), its images, an item whole, and its files as downloads. On real transcripts.
import { createHash } from "node:crypto";
import { realTranscripts } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLAUDE_MAIN,
  CLAUDE_SUBAGENT,
  CODEX_ROLLOUT,
  type StoredRealSession,
  SUBAGENT_ID,
  storeRealSessions,
} from "./support/real-stored-sessions.js";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

const real = realTranscripts("stored-session reader");

interface Outline {
  agentType: string;
  files: { path: string; size: number }[];
  transcripts: { path: string; role: string; agentId?: string; label: string }[];
}
// biome-ignore lint/suspicious/noExplicitAny: thread items, read field by field
type Entry = any;
interface Page {
  entries: Entry[];
  total: number;
  cursor?: string;
  problemCount: number;
}

describe.skipIf(!real.present)("a stored session read as a thread", () => {
  let app: TestApp;
  let alice: string;
  let bob: string;
  let stored: Awaited<ReturnType<typeof storeRealSessions>>;

  const get = async <T>(path: string, key = alice): Promise<T> => {
    const response = await app.call(path, { key });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as T;
  };
  const base = (session: StoredRealSession) => `/session-blobs/${session.sessionId}`;
  const allPages = async (session: StoredRealSession, path: string, limit: number) => {
    const entries: Entry[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query = new URLSearchParams({ path, limit: String(limit), ...(cursor ? { cursor } : {}) });
      const page = await get<Page>(`${base(session)}/transcript?${query}`);
      entries.push(...page.entries);
      cursor = page.cursor;
      pages++;
      expect(pages).toBeLessThan(10_000);
    } while (cursor);
    return entries;
  };

  beforeAll(async () => {
    app = await startTestApp();
    alice = await app.keyFor({ kind: "user", id: "alice" });
    bob = await app.keyFor({ kind: "user", id: "bob" });
    stored = await storeRealSessions(app, alice, real);
  });
  afterAll(() => app?.close());

  it("lists a Claude Code session's files and its transcripts: the main one, then its subagent's", async () => {
    const outline = await get<Outline>(`${base(stored.withSubagent)}/transcripts`);
    expect(outline.agentType).toBe("claude-code");
    const sessionId = stored.withSubagent.sessionId;
    expect(outline.files.map((file) => [file.path, file.size])).toEqual(
      [...stored.withSubagent.files].map(([path, bytes]) => [path, bytes.byteLength]),
    );
    expect(outline.transcripts).toEqual([
      { path: `${sessionId}.jsonl`, format: "claude-code", role: "main", label: "main" },
      {
        path: `${sessionId}/subagents/agent-${SUBAGENT_ID}.jsonl`,
        format: "claude-code",
        role: "subagent",
        agentId: SUBAGENT_ID,
        label: `subagent (${SUBAGENT_ID})`,
      },
    ]);
  });

  it("reads the main transcript as a thread: the prompt, the tool calls folded with their results, in order, across pages", async () => {
    const records = real.records(CLAUDE_MAIN);
    const path = `${stored.withSubagent.sessionId}.jsonl`;
    const entries = await allPages(stored.withSubagent, path, 7);
    const first = await get<Page>(`${base(stored.withSubagent)}/transcript?path=${encodeURIComponent(path)}`);
    expect(entries).toHaveLength(first.total);
    expect(first.problemCount).toBe(0);
    // The human's prompt, as the file's first user record holds it.
    const prompt = records.find(
      (record) => record.type === "user" && typeof record.message.content === "string",
    );
    expect(
      entries.find((entry) => entry.kind === "item" && entry.item.metadata === undefined)?.item.content[0]
        .text,
    ).toBe(prompt!.message.content);
    // Every tool_use of the file, in order, is one folded card with its result.
    const calls = records.flatMap((record) =>
      record.type === "assistant"
        ? record.message.content
            .filter((block: Entry) => block.type === "tool_use")
            .map((block: Entry) => block.name)
        : [],
    );
    const tools = entries.filter((entry) => entry.kind === "tool");
    expect(tools.map((entry) => entry.name)).toEqual(calls);
    expect(tools.every((entry) => entry.call && entry.result)).toBe(true);
    // The Task call's result names the subagent whose transcript the outline lists.
    const task = tools.find((entry) => entry.name === "Task");
    expect(task.result.metadata.tool.subagent.agent_id).toBe(SUBAGENT_ID);
    // Thinking is there, for the viewer to keep collapsed.
    expect(entries.some((entry) => entry.kind === "item" && entry.item.metadata?.type === "thinking")).toBe(
      true,
    );
  });

  it("reads a subagent's transcript as a thread of its own", async () => {
    const path = `${stored.withSubagent.sessionId}/subagents/agent-${SUBAGENT_ID}.jsonl`;
    const entries = await allPages(stored.withSubagent, path, 100);
    const calls = real
      .records(CLAUDE_SUBAGENT)
      .flatMap((record) =>
        record.type === "assistant"
          ? record.message.content
              .filter((block: Entry) => block.type === "tool_use")
              .map((block: Entry) => block.id)
          : [],
      );
    expect(entries.filter((entry) => entry.kind === "tool").map((entry) => entry.invocationId)).toEqual(
      calls,
    );
  });

  it("names each image by its ref and serves its bytes, as the agent stored them", async () => {
    const path = `${stored.large.sessionId}.jsonl`;
    const images = [
      ...stored.large.files
        .get(path)!
        .toString()
        .matchAll(/"data":"([A-Za-z0-9+/=]+)","media_type":"image\/png"/g),
    ].map((match) => Buffer.from(match[1]!, "base64"));
    expect(images.length).toBeGreaterThan(0);
    const text = JSON.stringify(await allPages(stored.large, path, 1000));
    for (const image of images) {
      const hash = createHash("sha256").update(image).digest("hex");
      expect(text).toContain(`blob:sha256:${hash}`);
      const response = await app.call(
        `${base(stored.large)}/transcript/images/${hash}?path=${encodeURIComponent(path)}`,
        { key: alice },
      );
      expect(response.headers.get("content-type")).toBe("image/png");
      expect(Buffer.from(await response.arrayBuffer())).toEqual(image);
    }
  });

  it("reads a Codex rollout through the Codex adapter, its pasted images named by ref", async () => {
    const outline = await get<Outline>(`${base(stored.codex)}/transcripts`);
    const [path] = [...stored.codex.files.keys()];
    expect(outline.transcripts).toEqual([{ path, format: "codex", role: "main", label: "main" }]);
    const entries = await allPages(stored.codex, path!, 50);
    const prompts = real
      .records(CODEX_ROLLOUT)
      .filter((record) => record.payload?.type === "user_message")
      .map((record) => record.payload.message as string);
    const posts = entries.filter((entry) => entry.kind === "item" && entry.item.metadata === undefined);
    expect(posts.length).toBe(prompts.length);
    for (const [index, post] of posts.entries()) {
      expect(post.item.content[0].text.startsWith(prompts[index])).toBe(true);
      expect(post.item.content[0].text).toMatch(/\[image: image\/png, blob:sha256:[0-9a-f]{64}\]/);
    }
  });

  it("gives an item a page cut whole, and every file byte for byte as a download", async () => {
    const path = `${stored.large.sessionId}.jsonl`;
    const entries = await allPages(stored.large, path, 1000);
    const cut = entries
      .flatMap((entry) => (entry.kind === "tool" ? [entry.call, entry.result] : [entry.item]))
      .find((item) => item?.metadata?.truncated === true);
    expect(cut).toBeDefined();
    const whole = await get<{ item: Entry }>(
      `${base(stored.large)}/transcript/item?path=${encodeURIComponent(path)}&id=${encodeURIComponent(cut.id)}`,
    );
    expect(JSON.stringify(whole.item).length).toBeGreaterThan(32 * 1024);
    expect(JSON.stringify(whole.item)).not.toContain("…[truncated");
    for (const [file, bytes] of stored.withSubagent.files) {
      const response = await app.call(`${base(stored.withSubagent)}/files?path=${encodeURIComponent(file)}`, {
        key: alice,
      });
      expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="[^"/]+"/);
      expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);
    }
  });

  it.each([
    [
      "a path that is not a transcript",
      (s: StoredRealSession) => `/transcript?path=${encodeURIComponent(`${s.sessionId}/../x.jsonl`)}`,
      404,
      "NOT_FOUND",
    ],
    ["no path", () => "/transcript", 400, "INVALID_INPUT"],
    [
      "a forged cursor",
      (s: StoredRealSession) => `/transcript?path=${s.sessionId}.jsonl&cursor=..%2F1`,
      400,
      "INVALID_INPUT",
    ],
    [
      "a cursor of another stored record",
      (s: StoredRealSession) => `/transcript?path=${s.sessionId}.jsonl&cursor=999999:1`,
      409,
      "CONFLICT",
    ],
    [
      "an image that is not a hash",
      (s: StoredRealSession) => `/transcript/images/..%2F..?path=${s.sessionId}.jsonl`,
      400,
      "INVALID_INPUT",
    ],
    [
      "an image it does not hold",
      (s: StoredRealSession) => `/transcript/images/${"ab".repeat(32)}?path=${s.sessionId}.jsonl`,
      404,
      "NOT_FOUND",
    ],
    ["a file it does not hold", () => "/files?path=..%2F..%2Fetc%2Fpasswd", 404, "NOT_FOUND"],
    [
      "an item it does not hold",
      (s: StoredRealSession) => `/transcript/item?path=${s.sessionId}.jsonl&id=nope`,
      404,
      "NOT_FOUND",
    ],
  ])("refuses %s", async (_name, suffix, status, code) => {
    const response = await app.call(`${base(stored.withSubagent)}${suffix(stored.withSubagent)}`, {
      key: alice,
    });
    expect(response.status).toBe(status);
    expect(await errorCode(response)).toBe(code);
  });

  it("answers another principal 404 on every read of it", async () => {
    const path = encodeURIComponent(`${stored.withSubagent.sessionId}.jsonl`);
    for (const suffix of ["/transcripts", `/transcript?path=${path}`, `/files?path=${path}`]) {
      const response = await app.call(`${base(stored.withSubagent)}${suffix}`, { key: bob });
      expect(response.status).toBe(404);
      expect(await response.text()).not.toContain("solution-architect");
    }
  });
});
