import { describeValue, StowageError, throwIfAborted } from "@stowage/core";
import { plainPostItem, statusItem } from "../builders/build-items.js";
import { STATUS_TOKEN_PATTERN, type ThreadItem } from "../schema/thread-item-schema.js";
import { assistantItems, compactionDetail, userParts, withIds } from "./anthropic-content.js";
import { type LineProblem, RecordProblem } from "./conversion.js";
import { anthropicUsage, TurnTracker } from "./turn-tracker.js";

export interface ClaudeAgentSdkAdapterOptions {
  /** Turn user text echoed in the stream into plain posts. Default true. */
  includeUserPrompts?: boolean;
}

/** Turns the messages of a Claude Agent SDK `query()` into thread items, one message at a time. */
export interface ClaudeAgentSdkAdapter {
  /** Converts the next SDK message; returns the items it completes. Never throws on bad messages. */
  push(message: unknown): ThreadItem[];
  /** Closes a turn left open by a stream that ended without a `result`. */
  end(): ThreadItem[];
  /** The session id, from the `system`/`init` message (it is not written to the transcript). */
  readonly sessionId: string | undefined;
  /** Messages that were skipped, by 1-based position in the stream. */
  readonly problems: readonly LineProblem[];
}

type Message = Record<string, unknown>;

const object = (value: unknown): Message | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Message) : undefined;

function resultFailure(message: Message): ThreadItem | undefined {
  const subtype = typeof message.subtype === "string" ? message.subtype : "error";
  if (subtype === "success" && message.is_error !== true) return undefined;
  const status = STATUS_TOKEN_PATTERN.test(subtype) && subtype !== "success" ? subtype : "error";
  const errors = Array.isArray(message.errors)
    ? message.errors.filter((error) => typeof error === "string")
    : [];
  const detail =
    errors.length > 0 ? errors.join("\n") : typeof message.result === "string" ? message.result : undefined;
  return statusItem({ status, ...(detail ? { detail } : {}) });
}

/**
 * Adapter for the Claude Agent SDK message stream: `system`/`init` (session id), assistant text,
 * thinking and tool_use blocks, user tool_result blocks, compaction, and `result` (a turn_end with
 * the query's usage and duration). Partial `stream_event`s and message types it does not know are
 * skipped.
 */
export function createClaudeAgentSdkAdapter(
  options: ClaudeAgentSdkAdapterOptions = {},
): ClaudeAgentSdkAdapter {
  const includeUserPrompts = options.includeUserPrompts ?? true;
  const turn = new TurnTracker();
  const problems: LineProblem[] = [];
  let sessionId: string | undefined;
  let position = 0;

  function system(message: Message): ThreadItem[] {
    switch (message.subtype) {
      case "init": {
        if (typeof message.session_id === "string") sessionId = message.session_id;
        const model = typeof message.model === "string" ? message.model : undefined;
        return [
          statusItem({
            status: "session_started",
            ...(model ? { detail: `model ${model}` } : {}),
            brief: "Session started",
          }),
        ];
      }
      case "compact_boundary": {
        const detail = compactionDetail(message.compact_metadata);
        return [
          statusItem({
            status: "context_compacted",
            ...(detail ? { detail } : {}),
            brief: "Context compacted",
          }),
        ];
      }
      case "status":
        return message.status === "compacting"
          ? [statusItem({ status: "compacting_context", brief: "Compacting context..." })]
          : [];
      default:
        return [];
    }
  }

  function convert(message: Message): ThreadItem[] {
    if (typeof message.type !== "string") throw new RecordProblem("message has no string type");
    if (sessionId === undefined && typeof message.session_id === "string") sessionId = message.session_id;
    switch (message.type) {
      case "system":
        return system(message);
      case "assistant": {
        const inner = object(message.message);
        if (!inner) throw new RecordProblem("assistant message has no message object");
        turn.activity();
        return withIds(assistantItems(inner.content, "assistant message"), message.uuid);
      }
      case "user": {
        const inner = object(message.message);
        if (!inner) throw new RecordProblem("user message has no message object");
        const { results, text } = userParts(inner.content, "user message");
        if (results.length > 0) {
          turn.activity();
          return withIds(results, message.uuid);
        }
        if (!includeUserPrompts || text.trim() === "" || message.isReplay === true) return [];
        return withIds([plainPostItem(text)], message.uuid);
      }
      case "result": {
        const items: ThreadItem[] = [];
        const failure = resultFailure(message);
        if (failure) items.push(failure);
        // The result closes the query's turn even when nothing streamed before it (an early error).
        turn.activity();
        const usage = anthropicUsage(message.usage);
        const ended = turn.finish({
          ...(usage ? { usage } : {}),
          ...(typeof message.duration_ms === "number" ? { durationMs: message.duration_ms } : {}),
        });
        if (ended) items.push(ended);
        return items;
      }
      default:
        return [];
    }
  }

  return {
    push(message) {
      position++;
      const fields = object(message);
      if (!fields) {
        problems.push({ line: position, message: `message is not an object, got ${describeValue(message)}` });
        return [];
      }
      try {
        return convert(fields);
      } catch (err) {
        if (!(err instanceof RecordProblem) && !StowageError.is(err, "INVALID_INPUT")) throw err;
        problems.push({ line: position, message: err.message });
        return [];
      }
    },
    end() {
      const ended = turn.finish();
      return ended ? [ended] : [];
    },
    get sessionId() {
      return sessionId;
    },
    problems,
  };
}

/**
 * Thread items from an SDK message stream (`query(...)`), yielded as soon as each message
 * arrives. Pass `adapter` to read the session id and problems afterwards.
 */
export async function* claudeAgentSdkItems(
  messages: AsyncIterable<unknown> | Iterable<unknown>,
  options: { signal?: AbortSignal; adapter?: ClaudeAgentSdkAdapter } = {},
): AsyncGenerator<ThreadItem> {
  const adapter = options.adapter ?? createClaudeAgentSdkAdapter();
  for await (const message of messages) {
    throwIfAborted(options.signal, "convert Claude Agent SDK messages");
    yield* adapter.push(message);
  }
  yield* adapter.end();
}
