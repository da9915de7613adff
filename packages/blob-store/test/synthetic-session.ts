/**
 * Builds session entries shaped like real coding-agent JSONL: pi-style messages (text, thinking
 * with signatures, tool calls still carrying `partialJson`, tool results, `data` images) and
 * Claude-Code-style records (`source.data` images, tool_result blocks with nested content).
 * Deterministic for a given seed, so tests and benchmarks see the same session every run.
 */

import { seededRandom } from "@stowage/core/testing";

const WORDS =
  "the test suite failed because the fixture path was wrong so I will read the file and fix the import then run npm test again".split(
    " ",
  );

function sentence(random: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ");
}

function imageBase64(random: () => number, bytes: number): string {
  const data = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i += 4) {
    const value = (random() * 0xffffffff) >>> 0;
    data[i] = value & 0xff;
    data[i + 1] = (value >>> 8) & 0xff;
    data[i + 2] = (value >>> 16) & 0xff;
    data[i + 3] = value >>> 24;
  }
  // A PNG signature first, as a real screenshot has.
  data.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.from(data).toString("base64");
}

export interface SyntheticSessionOptions {
  entries: number;
  images: number;
  /** Decoded image sizes are drawn uniformly from this range. */
  imageBytes: [number, number];
  seed?: number;
}

export function syntheticSession(options: SyntheticSessionOptions): Record<string, unknown>[] {
  const random = seededRandom(options.seed ?? 7);
  const imageEvery = Math.max(1, Math.floor(options.entries / Math.max(1, options.images)));
  const entries: Record<string, unknown>[] = [];
  let parentId: string | null = null;
  let images = 0;
  for (let i = 0; i < options.entries; i++) {
    const id = `e${i.toString(16).padStart(6, "0")}`;
    const timestamp = new Date(Date.UTC(2026, 10, 21, 9) + i * 1500).toISOString();
    const withImage = images < options.images && i % imageEvery === 0;
    const imageSize = Math.floor(
      options.imageBytes[0] + random() * (options.imageBytes[1] - options.imageBytes[0]),
    );
    let message: Record<string, unknown>;
    switch (i % 4) {
      case 0:
        message = {
          role: "user",
          content: [
            { type: "text", text: sentence(random, 20 + Math.floor(random() * 40)) },
            ...(withImage
              ? [{ type: "image", mimeType: "image/png", data: imageBase64(random, imageSize) }]
              : []),
          ],
          timestamp: Date.parse(timestamp),
        };
        break;
      case 1:
        message = {
          role: "assistant",
          content: [
            { type: "thinking", thinking: sentence(random, 60), thinkingSignature: `sig-${id}` },
            {
              type: "toolCall",
              id: `call_${id}`,
              name: "bash",
              arguments: { command: "npm test", timeout: 120 },
              partialJson: '{"command":"npm te',
            },
          ],
          usage: { input: 1200 + i, output: 80, cacheRead: 900 },
          stopReason: "toolUse",
        };
        break;
      case 2:
        message = {
          role: "toolResult",
          toolCallId: `call_e${(i - 1).toString(16).padStart(6, "0")}`,
          toolName: "bash",
          content: [
            { type: "text", text: Array.from({ length: 30 }, () => sentence(random, 12)).join("\n") },
            ...(withImage
              ? [
                  {
                    type: "tool_result",
                    tool_use_id: `toolu_${id}`,
                    content: [
                      {
                        type: "image",
                        source: {
                          type: "base64",
                          media_type: "image/png",
                          data: imageBase64(random, imageSize),
                        },
                      },
                    ],
                  },
                ]
              : []),
          ],
          isError: false,
        };
        break;
      default:
        message = {
          role: "assistant",
          content: [{ type: "text", text: sentence(random, 50) }],
          jsonlEvents: [{ type: "content_block_delta", index: 0 }],
        };
    }
    if (withImage) images++;
    entries.push({ type: "message", id, parentId, timestamp, message });
    parentId = id;
  }
  return entries;
}
