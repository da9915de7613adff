import { describeValue, StowageError } from "@stowage/core";

/** The agents whose sessions this package captures and restores. */
export const SESSION_AGENTS = ["claude-code", "codex", "opencode"] as const;

export type SessionAgent = (typeof SESSION_AGENTS)[number];

/** The agent a capture, a restore or a stored blob is for when none is named. */
export const DEFAULT_SESSION_AGENT: SessionAgent = "claude-code";

export function isSessionAgent(value: unknown): value is SessionAgent {
  return typeof value === "string" && (SESSION_AGENTS as readonly string[]).includes(value);
}

/** Throws INVALID_INPUT (reason `UNKNOWN_AGENT`) unless `value` is one of {@link SESSION_AGENTS}. */
export function assertSessionAgent(value: unknown, what = "agent"): asserts value is SessionAgent {
  if (!isSessionAgent(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be one of ${SESSION_AGENTS.map((agent) => `"${agent}"`).join(", ")}, got ${describeValue(value)}`,
      { reason: "UNKNOWN_AGENT" },
    );
  }
}
