import { describeValue, type OperationOptions, StowageError } from "@stowage/core";
import { runInSlices } from "../hot-state/run-steps.js";
import { countO200kTokens, countO200kTokensUpTo } from "./o200k-encoding.js";

/**
 * Counts the tokens of a text. It must return a non-negative integer; anything else (or a
 * throw) makes a budget check fail closed.
 */
export type TokenCounter = (text: string) => number;

/**
 * Exact token count with OpenAI's o200k_base encoding (GPT-4o, GPT-4.1, GPT-5, o-series), in time
 * linear in the text, whatever it holds (one long word, random base64, repeated characters). The
 * vocabulary is loaded on the first call, not at import. Special-token markers such as
 * `<|endoftext|>` inside a prompt are counted as the plain text they are (a tokenizer that threw
 * on them would let content break a budget check).
 */
export const countTokensExact: TokenCounter = (text) => {
  if (typeof text !== "string") {
    throw new StowageError("INVALID_INPUT", `token counting needs a string, got ${describeValue(text)}`);
  }
  return countO200kTokens(text);
};

/**
 * {@link countTokensExact}, in slices of about 10 ms that let the event loop go on (timers, I/O,
 * a server's other requests) between them: for a server counting a long text. ABORTED when
 * `signal` fires.
 */
export function countTokensExactInSlices(text: string, options: OperationOptions = {}): Promise<number> {
  if (typeof text !== "string") {
    return Promise.reject(
      new StowageError("INVALID_INPUT", `token counting needs a string, got ${describeValue(text)}`),
    );
  }
  return runInSlices(countO200kTokensUpTo(text, Number.POSITIVE_INFINITY), {
    signal: options.signal,
    what: "count tokens",
  });
}

/** The counter used wherever none is given: exact, never `chars / 4`. */
export const DEFAULT_TOKEN_COUNTER: TokenCounter = countTokensExact;

/** Why `count` is not a usable token count, or undefined when it is. */
export function tokenCountProblem(count: unknown, source = "the counter"): string | undefined {
  if (typeof count !== "number") return `${source} returned ${describeValue(count)}, not a number`;
  if (!Number.isSafeInteger(count) || count < 0) {
    return `${source} returned ${describeValue(count)}, not a non-negative integer`;
  }
  return undefined;
}

/**
 * Counts with `counter` and fails closed: a throw or a result that is not a non-negative integer
 * becomes BUDGET_EXCEEDED (reason `UNMEASURABLE`), because a budget that cannot be measured
 * cannot be shown to hold.
 */
export function measureTokens(counter: TokenCounter, text: string, what: string): number {
  let count: unknown;
  try {
    count = counter(text);
  } catch (err) {
    throw new StowageError(
      "BUDGET_EXCEEDED",
      `${what}: token counting failed, so the budget counts as exceeded`,
      {
        cause: err,
        reason: "UNMEASURABLE",
      },
    );
  }
  const problem = tokenCountProblem(count);
  if (problem) {
    throw new StowageError("BUDGET_EXCEEDED", `${what}: ${problem}, so the budget counts as exceeded`, {
      reason: "UNMEASURABLE",
    });
  }
  return count as number;
}

/**
 * {@link measureTokens} with `counter`, counting no further than past `max` when `counter` is
 * {@link countTokensExact}: the exact count up to `max`, otherwise a number over it, found in
 * work bounded by `max` and in slices (it yields between them). Any other counter is called once,
 * on the whole text.
 */
export function* measureTokensUpTo(
  counter: TokenCounter,
  text: string,
  max: number,
  what: string,
): Generator<void, number, void> {
  if (counter !== countTokensExact) return measureTokens(counter, text, what);
  try {
    return yield* countO200kTokensUpTo(text, max);
  } catch (err) {
    throw new StowageError(
      "BUDGET_EXCEEDED",
      `${what}: token counting failed, so the budget counts as exceeded`,
      {
        cause: err,
        reason: "UNMEASURABLE",
      },
    );
  }
}

/** Throws INVALID_INPUT unless `counter` is a function. */
export function assertTokenCounter(counter: unknown): asserts counter is TokenCounter {
  if (typeof counter !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `countTokens must be a function (text) => number, got ${describeValue(counter)}`,
    );
  }
}
