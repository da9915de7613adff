import { describe, expect, it } from "vitest";
import { agentSdkMessages } from "../bench/current-formats/agent-sdk.js";
import { claudeCode21Transcript } from "../bench/current-formats/claude-code-2-1.js";
import { codex125Rollout } from "../bench/current-formats/codex-0-125.js";
import { piSessionFile } from "../bench/current-formats/pi-session.js";
import {
  type ConversionResult,
  createClaudeAgentSdkAdapter,
  isThreadItem,
  type ThreadItem,
} from "../src/index.js";
import {
  convertClaudeCodeTranscript,
  convertCodexRollout,
  convertPiSession,
} from "./support/convert-whole.js";

const TURNS = 6;

function sdkItems(text: string): ConversionResult {
  const adapter = createClaudeAgentSdkAdapter();
  const items: ThreadItem[] = [];
  for (const line of text.split("\n")) items.push(...adapter.push(JSON.parse(line)));
  items.push(...adapter.end());
  return { items, problems: [...adapter.problems], sessionId: adapter.sessionId };
}

const kinds = (items: ThreadItem[]) =>
  items.map(
    (item) => (item.metadata as { status?: string } | undefined)?.status ?? item.metadata?.type ?? "post",
  );

// The bench measures these transcripts: they must be what the adapters read without a problem,
// or the bench would time the reporting of problems.
describe.each<[string, string, (text: string) => ConversionResult]>([
  ["Claude Code 2.1", claudeCode21Transcript(TURNS), (text) => convertClaudeCodeTranscript(text)],
  ["Codex 0.125", codex125Rollout(TURNS), (text) => convertCodexRollout(text)],
  ["pi v3", piSessionFile(TURNS), (text) => convertPiSession(text)],
  ["Agent SDK 0.3", agentSdkMessages(TURNS), sdkItems],
])("the bench's %s transcript", (_, text, convert) => {
  const { items, problems } = convert(text);

  it("converts with no problem into valid items, one turn_end per turn and a call and a result per tool", () => {
    expect(problems).toEqual([]);
    for (const item of items) expect(isThreadItem(item)).toBe(true);
    const found = kinds(items);
    expect(found.filter((kind) => kind === "turn_end")).toHaveLength(TURNS);
    expect(found.filter((kind) => kind === "tool_result").length).toBe(
      found.filter((kind) => kind === "tool_call").length,
    );
  });

  it("posts one prompt per turn, never the text the harness put beside it", () => {
    const posts = items.filter((item) => item.metadata === undefined);
    // The Agent SDK does not echo a query's prompt; the others post one per turn, and Claude
    // Code one more for the message typed while the agent worked.
    expect(posts.length).toBeGreaterThanOrEqual(text.includes('"type":"result"') ? 0 : TURNS);
    for (const post of posts)
      expect(post.content[0]!.text).not.toMatch(/<ide_opened_file>|<environment_context>|# AGENTS\.md/);
  });
});
