import { type Principal, StowageError } from "@stowage/core";
import { type Command, Option } from "commander";
import type { CommandContext } from "./context.js";
import { readSessionBlobs, withSessionStores, withStoredData } from "./open.js";
import { isUsageError, usageError } from "./usage-error.js";

/** What `--fallback` and its options parse to. */
export interface FallbackOptions {
  fallback?: "history";
  maxMessages?: number;
  budgetTokens?: number;
  job?: string;
}

function positiveInteger(name: string) {
  return (value: string): number => {
    if (!/^[1-9]\d{0,14}$/.test(value))
      throw usageError(`--${name} must be a positive integer, got ${value}`);
    return Number(value);
  };
}

/** `--fallback history`, `--max-messages`, `--budget-tokens`, `--job`. */
export function addFallbackOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        "--fallback <kind>",
        "when the stored session cannot be restored (none live, corrupt, expired, or its agent version refused), print its conversation history for a new session's prompt instead",
      ).choices(["history"]),
    )
    .addOption(
      new Option("--max-messages <n>", "with --fallback history: the last n messages (default 50)").argParser(
        positiveInteger("max-messages"),
      ),
    )
    .addOption(
      new Option(
        "--budget-tokens <n>",
        "with --fallback history: tokens (o200k) the history may take, the oldest messages dropped first (default 20,000)",
      ).argParser(positiveInteger("budget-tokens")),
    )
    .option(
      "--job <id>",
      "with --fallback history: a job whose thread gives the history when no stored session can be read",
    );
}

/** Usage errors for the fallback's options given without `--fallback`. */
export function checkFallbackOptions(options: FallbackOptions): void {
  if (options.fallback !== undefined) return;
  for (const [given, name] of [
    [options.maxMessages, "--max-messages"],
    [options.budgetTokens, "--budget-tokens"],
    [options.job, "--job"],
  ] as const) {
    if (given !== undefined) throw usageError(`${name} is an option of --fallback history: give that too`);
  }
}

/**
 * The failures of a restore that the history stands in for: no live stored session (NOT_FOUND),
 * a blob that does not read back (INTEGRITY, INVALID_INPUT, TOO_LARGE), a CLI version whose format
 * differs (AGENT_VERSION_MISMATCH). Anything else (a refusal to write over another session's file,
 * a locked data directory, an abort) is an error to see, not to work around.
 */
export function fallbackApplies(err: unknown): err is StowageError {
  if (!StowageError.is(err) || isUsageError(err)) return false;
  if (err.code === "CONFLICT") return err.reason === "AGENT_VERSION_MISMATCH";
  return ["NOT_FOUND", "INTEGRITY", "INVALID_INPUT", "TOO_LARGE"].includes(err.code);
}

const describe = (err: StowageError) => `${err.code}${err.reason ? ` ${err.reason}` : ""}`;

/**
 * Prints the request's conversation history (stdout: its text, or with `--json` the whole
 * result) after its restore failed with `cause`, and one line on stderr saying why and where the
 * history came from. Reads only the principal's stored sessions, blobs and, with `--job`, threads.
 * NOT_FOUND (`NO_HISTORY`) naming the restore's failure and everything tried when there is none.
 */
export async function printHistoryFallback(
  context: CommandContext,
  principal: Principal,
  requestId: string,
  options: FallbackOptions & { json?: boolean },
  cause: StowageError,
): Promise<void> {
  const { requestHistory } = await import("@stowage/tenancy");
  const history = await readSessionBlobs(context, async ({ sessionBlobs, ownerOf }) => {
    const owner = ownerOf(principal);
    const stored = {
      list: (page?: { cursor?: string; limit?: number }) =>
        sessionBlobs ? sessionBlobs.listByOwner(owner, page) : Promise.resolve({ sessions: [] }),
      getBySessionId: (sessionId: string) =>
        sessionBlobs ? sessionBlobs.getBySessionId(owner, sessionId) : Promise.resolve(null),
    };
    // What is not given is tenancy's default (50 messages, 20,000 tokens), named there once.
    const historyOptions = {
      ...(options.maxMessages === undefined ? {} : { maxMessages: options.maxMessages }),
      ...(options.budgetTokens === undefined ? {} : { budgetTokens: options.budgetTokens }),
      ...(options.job === undefined ? {} : { job: options.job }),
    };
    try {
      // Threads are a tenant's store: opened only when a job is named.
      return options.job === undefined
        ? await withStoredData(context, (shared) =>
            requestHistory(
              { sessionBlobs: stored, blobs: shared.ownedBlobs(principal) },
              requestId,
              historyOptions,
            ),
          )
        : await withSessionStores(context, (stores) =>
            requestHistory(
              {
                sessionBlobs: stored,
                blobs: stores.ownedBlobs(principal),
                threads: stores.tenant(principal).threads,
              },
              requestId,
              historyOptions,
            ),
          );
    } catch (err) {
      if (!StowageError.is(err, "NOT_FOUND")) throw err;
      throw new StowageError(
        "NOT_FOUND",
        `restore of request ${requestId} failed (${describe(cause)}: ${cause.message}) and the fallback found no history: ${err.message}`,
        { cause: err, reason: "NO_HISTORY", ...(err.details ? { details: err.details } : {}) },
      );
    }
  });
  const source =
    history.source.kind === "stored-session"
      ? `stored session ${history.source.sessionId} (${history.source.agent})`
      : `job thread ${history.source.jobId}/${history.source.alias}`;
  context.note(
    `fallback to history: restore of request ${requestId} failed with ${describe(cause)}; ` +
      `history of ${source}: ${history.messages.length} of ${history.total} messages, ${history.tokens} tokens` +
      (history.skipped.length > 0 ? `, ${history.skipped.length} unreadable stored session(s) skipped` : ""),
  );
  if (options.json) {
    context.out(
      JSON.stringify(
        {
          fallback: "history",
          requestId,
          cause: {
            code: cause.code,
            ...(cause.reason ? { reason: cause.reason } : {}),
            message: cause.message,
          },
          ...history,
        },
        null,
        2,
      ),
    );
  } else context.out(history.text);
}
