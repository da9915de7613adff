/** What a correct conversion of a generated fixture must report, computed while writing it. */
export interface ExpectedSession {
  sessionId: string;
  /** Per finished turn, in order: the numbers its turn_end item must carry. */
  turns: {
    input_tokens: number;
    input_tokens_cached: number;
    output_tokens: number;
    duration_ms: number | null;
  }[];
  toolCalls: number;
  toolResults: number;
  /** Images in prompts and tool results. */
  images: number;
  /** 1-based numbers of the lines a reader must report as problems. */
  problemLines: number[];
}

/** Usage of one model call, as the writer invents it. */
export interface CallUsage {
  uncached: number;
  cacheWrite: number;
  cacheRead: number;
  output: number;
}

/** What a generator expects before its first turn: nothing counted yet. */
export function emptyExpected(sessionId: string): ExpectedSession {
  return { sessionId, turns: [], toolCalls: 0, toolResults: 0, images: 0, problemLines: [] };
}
