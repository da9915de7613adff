import {
  describeValue,
  type OperationOptions,
  runInSlices,
  runToEnd,
  type Steps,
  StowageError,
} from "@stowage/core";
import { invalidValue } from "../schemas/schemas.js";
import { countO200kUpTo, MAX_PIECE_CHARS } from "./o200k.js";

/** Counts the tokens of a text: a non-negative integer, else (or a throw) a budget check fails closed. */
export type TokenCounter = (text: string) => number;

function* exactCount(text: unknown): Steps<number> {
  if (typeof text !== "string") throw invalidValue("token counting needs a string", text);
  const count = yield* countO200kUpTo(text, Number.POSITIVE_INFINITY);
  if (count !== Number.POSITIVE_INFINITY) return count;
  const message = `the text holds an unbroken run (one word, one repeated character) over ${MAX_PIECE_CHARS} characters, which is not counted`;
  throw new StowageError("TOO_LARGE", message, {
    reason: "RUN_TOO_LONG",
    details: { limit: MAX_PIECE_CHARS },
  });
}

/**
 * Exact token count with OpenAI's o200k_base encoding (GPT-4o, GPT-4.1, GPT-5, o-series), by
 * gpt-tokenizer, loaded on the first call. Special-token markers such as `<|endoftext|>` count as
 * the plain text they are (a tokenizer that threw on them would let content break a budget
 * check). TOO_LARGE (`RUN_TOO_LONG`) for a text holding an unbroken run over 1,024 characters.
 */
export const countTokensExact: TokenCounter = (text) => runToEnd(exactCount(text));

/** {@link countTokensExact} in slices of about 10 ms that let the event loop go on; ABORTED when `signal` fires. */
export function countTokensExactInSlices(text: string, options: OperationOptions = {}): Promise<number> {
  return runInSlices(exactCount(text), { signal: options.signal, what: "count tokens" });
}

/** Why `count` is not a usable count (a non-negative safe integer), or undefined when it is. */
export function countProblem(count: unknown, source = "the counter"): string | undefined {
  if (typeof count === "number" && Number.isSafeInteger(count) && count >= 0) return undefined;
  return `${source} returned ${typeof count === "number" ? String(count) : describeValue(count)}, not a non-negative integer`;
}

/**
 * Counts `text` with `counter`, failing closed: a throw or a bad count is BUDGET_EXCEEDED
 * (`UNMEASURABLE`): a budget that cannot be measured cannot be shown to hold. The exact counter
 * stops once past `max`, in slices; a text it cannot count is over any `max` (Infinity).
 */
export function* measureTokensUpTo(
  counter: TokenCounter,
  text: string,
  max: number,
  what: string,
): Steps<number> {
  let count: unknown;
  let problem: string | undefined;
  let cause: unknown;
  try {
    if (counter === countTokensExact) return yield* countO200kUpTo(text, max);
    count = counter(text);
    problem = countProblem(count);
  } catch (err) {
    [problem, cause] = ["token counting failed", err];
  }
  if (!problem) return count as number;
  const message = `${what}: ${problem}, so the budget counts as exceeded`;
  throw new StowageError("BUDGET_EXCEEDED", message, { cause, reason: "UNMEASURABLE" });
}

/** Throws INVALID_INPUT unless `counter` is a function. */
export function assertTokenCounter(counter: unknown): asserts counter is TokenCounter {
  if (typeof counter === "function") return;
  throw invalidValue("countTokens must be a function (text) => number", counter);
}
