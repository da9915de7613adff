import type { Prng } from "../../test/fixture-generators/prng.js";
import { sessionScript, type Turn } from "../../test/fixture-generators/session-script.js";

type Json = Record<string, unknown>;

export const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const BASE64 = `${BASE62}+/`;
export const MODEL = "claude-sonnet-4-5-20250929";

/** The session every format renders: ordinary turns of 8 to 14 tool calls, no images. */
export const benchSession = (random: Prng, turns: number): Turn[] =>
  sessionScript(random, { turns, longOutputBytes: 0, images: false, toolsPerTurn: [8, 14] });

/** One Anthropic API call: its message id and its usage. */
export interface AnthropicCall {
  id: string;
  usage: Json;
}

/** Successive API calls of one session, each reading from the cache what the earlier ones wrote. */
export function anthropicCalls(random: Prng, idPrefix: string): () => AnthropicCall {
  let cacheRead = 18_000;
  return () => {
    const cacheWrite = random.int(150, 3200);
    const usage = {
      input_tokens: random.int(3, 12),
      cache_creation_input_tokens: cacheWrite,
      cache_read_input_tokens: cacheRead,
      cache_creation: { ephemeral_5m_input_tokens: cacheWrite, ephemeral_1h_input_tokens: 0 },
      output_tokens: random.int(24, 900),
      service_tier: "standard",
    };
    cacheRead += cacheWrite;
    return { id: `${idPrefix}${random.chars(24, BASE62)}`, usage };
  };
}

/** An assistant message holding one content block of a call, as Claude Code and the SDK stream it. */
export const assistantMessage = (call: AnthropicCall, block: Json): Json => ({
  model: MODEL,
  id: call.id,
  type: "message",
  role: "assistant",
  content: [block],
  stop_reason: null,
  stop_sequence: null,
  usage: call.usage,
});
