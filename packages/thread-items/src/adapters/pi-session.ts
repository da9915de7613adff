import { firstLine } from "../builders/brief-text.js";
import {
  plainPostItem,
  statusItem,
  textItem,
  thinkingItem,
  toolCallItem,
  toolResultItem,
} from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { withIds } from "./anthropic-content.js";
import { type LineConverter, lineConverter, RecordProblem } from "./conversion.js";
import { imagePlaceholder } from "./media-placeholder.js";
import { boundedToolField, type Fields, object, statusDetail } from "./record-fields.js";
import { piUsage, TurnTracker } from "./turn-tracker.js";

/** Options of {@link createPiSessionConverter}. */
export interface PiSessionOptions {
  /** Turn what the human typed into plain posts. Default true. */
  includeUserPrompts?: boolean;
}

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value : undefined;

/** pi content (a string, or text and image blocks) as text, images as placeholders. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  // Most messages and tool results are one text block: no list to join.
  if (content.length === 1) {
    const only = object(content[0]);
    if (only?.type === "text" && typeof only.text === "string") return only.text;
  }
  const parts: string[] = [];
  for (const block of content) {
    const fields = object(block);
    if (fields?.type === "text" && typeof fields.text === "string") parts.push(fields.text);
    else if (fields?.type === "image") parts.push(imagePlaceholder(fields.mimeType, fields.data));
  }
  return parts.join("\n");
}

/** Thread items for an assistant message's blocks: text, thinking, tool calls. */
function assistantBlocks(content: unknown): ThreadItem[] {
  if (!Array.isArray(content)) throw new RecordProblem("assistant message has no content array");
  const items: ThreadItem[] = [];
  for (const block of content) {
    const fields = object(block);
    if (fields?.type === "text" && typeof fields.text === "string") {
      if (fields.text.trim() !== "") items.push(textItem(fields.text));
    } else if (fields?.type === "thinking" && typeof fields.thinking === "string") {
      if (fields.thinking.trim() !== "") items.push(thinkingItem(fields.thinking));
    } else if (fields?.type === "toolCall") {
      if (typeof fields.id !== "string" || typeof fields.name !== "string") {
        throw new RecordProblem("assistant message has a toolCall block without a string id and name");
      }
      items.push(
        toolCallItem({
          name: boundedToolField(fields.name, "tool name", "toolCall block"),
          invocationId: boundedToolField(fields.id, "tool id", "toolCall block"),
          input: fields.arguments ?? {},
        }),
      );
    }
  }
  return items;
}

/** A user `!` command: a status with the command, its output and how it ended. */
function bashExecution(message: Fields, entry: Fields): ThreadItem[] {
  const command = typeof message.command === "string" ? message.command : "";
  const output = typeof message.output === "string" ? message.output : "";
  const exit =
    message.cancelled === true
      ? "cancelled"
      : typeof message.exitCode === "number"
        ? `exit code ${message.exitCode}`
        : "";
  const detail = [`$ ${command}`, output.trimEnd(), exit].filter((part) => part !== "").join("\n");
  const brief = `! ${firstLine(command)}`;
  return withIds(
    [statusItem({ status: "user_shell_command", detail: statusDetail(detail), brief })],
    entry.id,
  );
}

/** A status from an entry or message with a summary or content (compaction, branch summary, extension message). */
function noted(status: string, brief: string, body: string | undefined, id: unknown): ThreadItem[] {
  return withIds([statusItem({ status, brief, ...(body ? { detail: statusDetail(body) } : {}) })], id);
}

function compaction(tokens: unknown, id: unknown): ThreadItem[] {
  const detail =
    typeof tokens === "number" ? `compaction at ${tokens.toLocaleString("en-US")} tokens` : undefined;
  return noted("context_compacted", "Context compacted", detail, id);
}

/** The `session` header's status. */
function sessionStarted(entry: Fields): ThreadItem[] {
  const model =
    typeof entry.provider === "string" && typeof entry.modelId === "string"
      ? `model ${entry.provider}/${entry.modelId}`
      : undefined;
  return [
    statusItem({
      status: "session_started",
      ...(model ? { detail: statusDetail(model) } : {}),
      brief: "Session started",
    }),
  ];
}

/**
 * An incremental converter of a pi coding-agent session (`~/.pi/agent/sessions/…/<time>_<id>.jsonl`,
 * versions 1 to 3), one line at a time. The `session` header gives the session id; `message`
 * entries give posts (user), text, thinking and tool calls (assistant) and tool results; an
 * assistant message that stops for any reason other than a tool call ends the turn, with its
 * usage summed over the turn's model calls. User `!` commands (`bashExecution`), extension
 * messages, branch summaries, compactions and model changes become status items; thinking-level
 * changes, labels, session names and extension state are skipped. A branched session (entries with
 * `parentId`) is read in file order, which is the order things happened. Pass it to
 * `convertTranscript` for a whole file.
 */
export function createPiSessionConverter(options: PiSessionOptions = {}): LineConverter {
  const includeUserPrompts = options.includeUserPrompts ?? true;
  const turn = new TurnTracker();
  let sessionId: string | undefined;
  let calls = 0;

  function user(message: Fields, entry: Fields): ThreadItem[] {
    const body = contentText(message.content);
    if (body.trim() === "") return [];
    const ended = turn.close();
    turn.begin(entry.timestamp);
    return [...ended, ...(includeUserPrompts ? withIds([plainPostItem(body)], entry.id) : [])];
  }

  function assistant(message: Fields, entry: Fields): ThreadItem[] {
    turn.activity(entry.timestamp);
    turn.callUsage(typeof entry.id === "string" ? entry.id : `call ${++calls}`, piUsage(message.usage));
    const items = assistantBlocks(message.content);
    const error = text(message.errorMessage);
    if (message.stopReason === "aborted") {
      items.push(
        statusItem({
          status: "interrupted",
          ...(error ? { detail: statusDetail(error) } : {}),
          brief: "Interrupted by the user",
        }),
      );
    } else if (message.stopReason === "error") {
      items.push(statusItem({ status: "api_error", ...(error ? { detail: statusDetail(error) } : {}) }));
    }
    const identified = withIds(items, entry.id);
    // The agent loop runs on while the model calls tools; any other stop ends the turn.
    return message.stopReason === "toolUse"
      ? identified
      : [...identified, ...turn.close({ at: entry.timestamp })];
  }

  function toolResult(message: Fields, entry: Fields): ThreadItem[] {
    if (typeof message.toolCallId !== "string")
      throw new RecordProblem("toolResult message has no string toolCallId");
    turn.activity(entry.timestamp);
    const item = toolResultItem({
      invocationId: boundedToolField(message.toolCallId, "toolCallId", "toolResult message"),
      output: contentText(message.content),
      isError: message.isError === true,
    });
    return withIds([item], entry.id);
  }

  function message(entry: Fields): ThreadItem[] {
    const body = object(entry.message);
    if (!body) throw new RecordProblem("message entry has no message object");
    switch (body.role) {
      case "user":
        return user(body, entry);
      case "assistant":
        return assistant(body, entry);
      case "toolResult":
        return toolResult(body, entry);
      case "bashExecution":
        return bashExecution(body, entry);
      case "custom":
      case "hookMessage":
        return noted(
          "custom_message",
          `Extension message: ${String(body.customType ?? "custom")}`,
          contentText(body.content),
          entry.id,
        );
      case "branchSummary":
        return noted("branch_summary", "Branch summary", text(body.summary), entry.id);
      case "compactionSummary":
        return compaction(body.tokensBefore, entry.id);
      default:
        return [];
    }
  }

  return lineConverter({
    record(entry) {
      if (typeof entry.type !== "string") throw new RecordProblem("entry has no string type");
      switch (entry.type) {
        case "session":
          if (typeof entry.id === "string") sessionId ??= entry.id;
          return sessionStarted(entry);
        case "message":
          return message(entry);
        case "compaction":
          return compaction(entry.tokensBefore, entry.id);
        case "branch_summary":
          return noted("branch_summary", "Branch summary", text(entry.summary), entry.id);
        case "custom_message":
          return noted(
            "custom_message",
            `Extension message: ${String(entry.customType ?? "custom")}`,
            contentText(entry.content),
            entry.id,
          );
        case "model_change": {
          const model = [entry.provider, entry.modelId].filter((part) => typeof part === "string").join("/");
          return noted(
            "model_changed",
            model ? `Model: ${model}` : "Model changed",
            model || undefined,
            entry.id,
          );
        }
        default:
          // thinking_level_change, label, session_info, custom (extension state), and future types.
          return [];
      }
    },
    end: () => turn.close(),
    sessionId: () => sessionId,
  });
}
