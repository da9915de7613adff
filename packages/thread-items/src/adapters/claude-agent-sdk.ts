import { describeValue, StowageError, throwIfAborted } from "@stowage/core";
import { statusItem } from "../builders/build-items.js";
import { STATUS_TOKEN_PATTERN, type ThreadItem } from "../schema/thread-item-schema.js";
import {
  assistantItems,
  compactionDetail,
  contentText,
  interruption,
  promptItems,
  type TypedTextAs,
  userParts,
  withIds,
} from "./anthropic-content.js";
import { sdkNotice } from "./claude-agent-sdk-notices.js";
import { type LineProblem, RecordProblem, uniqueToolResults } from "./conversion.js";
import { type Fields, object, statusDetail } from "./record-fields.js";
import { anthropicUsage, TurnTracker } from "./turn-tracker.js";

/** Options of {@link createClaudeAgentSdkAdapter}. */
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

/** Who sent a user message that no human typed (`origin.kind`), as a status token. */
const ORIGIN_STATUS: Readonly<Record<string, string>> = {
  "task-notification": "task_notification",
  peer: "peer_message",
  channel: "channel_message",
};

/** A failed query's status, or undefined for a success (a result without `subtype` that is not an error is one). */
function resultFailure(message: Fields): ThreadItem | undefined {
  const subtype = typeof message.subtype === "string" ? message.subtype : undefined;
  if ((subtype === undefined || subtype === "success") && message.is_error !== true) return undefined;
  const status = subtype && STATUS_TOKEN_PATTERN.test(subtype) && subtype !== "success" ? subtype : "error";
  const errors = Array.isArray(message.errors)
    ? message.errors.filter((error) => typeof error === "string")
    : [];
  const detail =
    errors.length > 0 ? errors.join("\n") : typeof message.result === "string" ? message.result : undefined;
  return statusItem({ status, ...(detail ? { detail: statusDetail(detail) } : {}) });
}

/** A `system` message: the session's start, compaction, and notices. */
function systemItems(message: Fields): ThreadItem[] {
  switch (message.subtype) {
    case "init": {
      const model = typeof message.model === "string" ? message.model : undefined;
      return [
        statusItem({
          status: "session_started",
          ...(model ? { detail: statusDetail(`model ${model}`) } : {}),
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
      if (message.compact_result === "failed") {
        const error = typeof message.compact_error === "string" ? message.compact_error : undefined;
        return [
          statusItem({ status: "compaction_failed", ...(error ? { detail: statusDetail(error) } : {}) }),
        ];
      }
      return message.status === "compacting"
        ? [statusItem({ status: "compacting_context", brief: "Compacting context..." })]
        : [];
    default: {
      const notice = sdkNotice(message);
      return notice ? withIds([statusItem(notice)], message.uuid) : [];
    }
  }
}

/** A `result`: the query's failure, when it failed, and the turn's end with its usage and duration. */
function resultItems(message: Fields, turn: TurnTracker): ThreadItem[] {
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

/**
 * Adapter for the Claude Agent SDK message stream (`SDKMessage`): `system`/`init` (session id),
 * assistant text, thinking and tool_use blocks (usage counted once per API message, so a stream
 * that ends without a `result` still has its tokens), user tool_result blocks, prompts (text no
 * human typed becomes a status), compaction, notices (retries, denials, rate limits, task and hook
 * failures… as status items), and `result` (a turn_end with the query's usage and duration).
 * Partial `stream_event`s and the types listed in the README as ignored are skipped on purpose.
 */
export function createClaudeAgentSdkAdapter(
  options: ClaudeAgentSdkAdapterOptions = {},
): ClaudeAgentSdkAdapter {
  const includeUserPrompts = options.includeUserPrompts ?? true;
  const turn = new TurnTracker();
  const problems: LineProblem[] = [];
  const unique = uniqueToolResults();
  let sessionId: string | undefined;
  let position = 0;
  const report = (message: string) => problems.push({ line: position, message });

  function assistant(message: Fields): ThreadItem[] {
    const inner = object(message.message);
    if (!inner) throw new RecordProblem("assistant message has no message object");
    turn.activity(message.timestamp);
    // The SDK sends one message per content block, each with the API message's usage: count it once.
    turn.callUsage(
      typeof inner.id === "string" ? inner.id : String(message.uuid),
      anthropicUsage(inner.usage),
    );
    if (typeof message.error === "string") {
      const text = contentText(inner.content).trim();
      const detail = text ? `${message.error}: ${text}` : message.error;
      return withIds([statusItem({ status: "api_error", detail: statusDetail(detail) })], message.uuid);
    }
    return withIds(assistantItems(inner.content, "assistant message"), message.uuid);
  }

  /** What the typed text of a user message is: a post, or a status when no human wrote it. */
  function typedAs(message: Fields): TypedTextAs {
    // A subagent's prompt, written by the main agent (its Task/Agent tool call is the parent);
    // transcript records read back from a subagent's file say `isSidechain` instead.
    if (typeof message.parent_tool_use_id === "string" || message.isSidechain === true)
      return { status: "subagent_prompt" };
    const origin = object(message.origin)?.kind;
    const token = typeof origin === "string" ? ORIGIN_STATUS[origin] : undefined;
    if (token) return { status: token };
    // Synthetic messages are written by the SDK itself (expanded skills, injected context).
    return includeUserPrompts && message.isSynthetic !== true ? "post" : "nothing";
  }

  function user(message: Fields): ThreadItem[] {
    const inner = object(message.message);
    if (!inner) throw new RecordProblem("user message has no message object");
    // Meta messages (command caveats, skill bodies) and compaction summaries come back from
    // resumed sessions and `getSessionMessages` as they are in the transcript: nobody typed them.
    if (message.isMeta === true || message.isCompactSummary === true) return [];
    const { results, texts } = userParts(inner.content, "user message", message.tool_use_result);
    if (results.length > 0) {
      turn.activity(message.timestamp);
      return withIds(results, message.uuid);
    }
    const text = texts.join("\n");
    if (text.trim() === "" || message.isReplay === true) return [];
    const interrupted = interruption(text, message.uuid);
    if (interrupted) {
      turn.activity(message.timestamp);
      return interrupted;
    }
    return promptItems(texts, message.uuid, typedAs(message));
  }

  function convert(message: Fields): ThreadItem[] {
    if (typeof message.type !== "string") throw new RecordProblem("message has no string type");
    if (sessionId === undefined && typeof message.session_id === "string") sessionId = message.session_id;
    switch (message.type) {
      case "system":
        // The session's id as `init` gives it, whatever earlier messages said.
        if (message.subtype === "init" && typeof message.session_id === "string")
          sessionId = message.session_id;
        return systemItems(message);
      case "assistant":
        return assistant(message);
      case "user":
        return user(message);
      case "result":
        return resultItems(message, turn);
      case "conversation_reset": {
        // `/clear` and the like: the conversation so far is over, with its turn.
        const trigger = typeof message.trigger === "string" ? message.trigger : undefined;
        const reset = statusItem({ status: "conversation_reset", ...(trigger ? { detail: trigger } : {}) });
        return [...turn.close({ at: message.timestamp }), ...withIds([reset], message.uuid)];
      }
      default: {
        const notice = sdkNotice(message);
        return notice ? withIds([statusItem(notice)], message.uuid) : [];
      }
    }
  }

  return {
    push(message) {
      position++;
      const fields = object(message);
      if (!fields) {
        report(`message is not an object, got ${describeValue(message)}`);
        return [];
      }
      try {
        return unique(convert(fields), report);
      } catch (err) {
        if (!(err instanceof RecordProblem) && !StowageError.is(err, "INVALID_INPUT")) throw err;
        report(err.message);
        return [];
      }
    },
    end: () => turn.close(),
    get sessionId() {
      return sessionId;
    },
    problems,
  };
}

/**
 * Thread items from an SDK message stream (`query(...)`), yielded as soon as each message
 * arrives. Pass `adapter` to read the session id and problems afterwards. When the stream throws
 * (the Claude Code process exited, the transport failed), a `stream_failed` status and the open
 * turn's `turn_end` (with the tokens of every assistant message so far) are yielded before the
 * error is thrown on; an abort through `signal` is thrown as it is.
 */
export async function* claudeAgentSdkItems(
  messages: AsyncIterable<unknown> | Iterable<unknown>,
  options: { signal?: AbortSignal; adapter?: ClaudeAgentSdkAdapter } = {},
): AsyncGenerator<ThreadItem> {
  const adapter = options.adapter ?? createClaudeAgentSdkAdapter();
  try {
    for await (const message of messages) {
      throwIfAborted(options.signal, "convert Claude Agent SDK messages");
      yield* adapter.push(message);
    }
  } catch (err) {
    if (StowageError.is(err, "ABORTED")) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    yield statusItem({ status: "stream_failed", ...(reason ? { detail: statusDetail(reason) } : {}) });
    yield* adapter.end();
    throw err;
  }
  yield* adapter.end();
}
