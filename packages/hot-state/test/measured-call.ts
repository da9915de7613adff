import { countTokensHeuristic } from "@stowage/test-support";
import { buildHotState, measurePrompt, type PromptMetrics } from "../src/index.js";
import { captureLogger } from "./capture-logger.js";

/** One model call of `session` (run `run-1`) whose system prompt is `systemChars` characters. */
export function measuredCall(session: string, systemChars: number, budget = {}): PromptMetrics {
  const logger = captureLogger();
  const hotState = buildHotState(
    { session_id: session, objective: "ship" },
    { countTokens: countTokensHeuristic, logger },
  );
  return measurePrompt(
    {
      sessionId: session,
      runId: "run-1",
      hotState,
      systemPrompt: "x".repeat(systemChars),
      userPrompt: "go on",
    },
    { countTokens: countTokensHeuristic, logger, budget },
  );
}
