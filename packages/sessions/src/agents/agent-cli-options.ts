import { describeValue, StowageError } from "@stowage/core";

/** What every agent CLI Stowage runs is given: where its binary is, and how long a run may take. */
interface AgentCliOptions {
  bin: string;
  timeoutMs?: number;
}

/**
 * Throws INVALID_INPUT unless `value` names the CLI's binary (a non-empty `bin`) and any
 * `timeoutMs` is a positive integer. `name` is the option's name (`codex`, `opencode`);
 * `missing` what a caller without a binary is told (its message and reason).
 */
export function assertAgentCliOptions(
  value: unknown,
  name: string,
  missing: { message: string; reason?: string },
): asserts value is AgentCliOptions {
  const options = value as Partial<AgentCliOptions> | undefined;
  if (typeof options?.bin !== "string" || options.bin === "") {
    throw new StowageError("INVALID_INPUT", `${missing.message}, got ${describeValue(options?.bin)}`, {
      ...(missing.reason === undefined ? {} : { reason: missing.reason }),
    });
  }
  const { timeoutMs } = options;
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${name}.timeoutMs must be a positive integer, got ${describeValue(timeoutMs)}`,
    );
  }
}
