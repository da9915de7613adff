import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { seededUuid } from "@stowage/sessions/testing";

const PROMPTS = [
  "fix the failing test",
  "add a README section",
  "why is CI red?",
  "ünïcødé ✓ prompt",
  "null\u0000byte",
];

/**
 * Transcript entries like the ones the SDK mirrors: user and assistant lines with uuids and
 * timestamps, and uuid-less metadata (titles, tags, summaries) that exercise foldSessionSummary.
 */
export function storeEntries(
  random: () => number,
  count: number,
  clock: { ms: number },
): SessionStoreEntry[] {
  return Array.from({ length: count }, () => {
    clock.ms += 1000 + Math.floor(random() * 5000);
    const timestamp = new Date(clock.ms).toISOString();
    const pick = random();
    if (pick < 0.4) {
      return {
        type: "user",
        uuid: seededUuid(random),
        timestamp,
        cwd: "/workspace/app",
        isSidechain: false,
        message: { role: "user", content: PROMPTS[Math.floor(random() * PROMPTS.length)]! },
      };
    }
    if (pick < 0.75) {
      return {
        type: "assistant",
        uuid: seededUuid(random),
        timestamp,
        message: {
          role: "assistant",
          content: [
            { type: "text", text: `step ${Math.floor(random() * 1e6)}` },
            {
              type: "tool_use",
              id: "toolu_1",
              name: "Bash",
              input: { command: "npm test", n: 1.5, ok: true, none: null },
            },
          ],
        },
      };
    }
    if (pick < 0.85)
      return { type: "custom-title", customTitle: `title ${Math.floor(random() * 100)}`, sessionId: "x" };
    if (pick < 0.92) return { type: "tag", tag: random() < 0.3 ? "" : `tag-${Math.floor(random() * 5)}` };
    return {
      type: "summary",
      summary: `summary ${Math.floor(random() * 100)}`,
      leafUuid: seededUuid(random),
    };
  });
}
