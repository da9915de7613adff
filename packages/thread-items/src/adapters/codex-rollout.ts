import {
  plainPostItem,
  statusItem,
  textItem,
  thinkingItem,
  toolCallItem,
  toolCallItemOfJson,
  toolResultItem,
} from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { withBrief, withTotalLines, writeStdinBrief } from "./codex-briefs.js";
import { codexImage, partsText, typedText } from "./codex-content.js";
import { failedOutput, readToolOutput } from "./codex-tool-output.js";
import { attachedContext, injectedFragment } from "./codex-user-text.js";
import {
  type ConversionResult,
  convertLines,
  type LineConverter,
  lineConverter,
  RecordProblem,
} from "./conversion.js";
import { boundedToolField, type Fields, object, statusDetail } from "./record-fields.js";
import { openAiUsage, type TokenUsage, TurnTracker } from "./turn-tracker.js";

/** Options of {@link createCodexRolloutConverter} and {@link convertCodexRollout}. */
export interface CodexRolloutOptions {
  /** Turn what the human typed into plain posts. Default true. */
  includeUserPrompts?: boolean;
}

/** Payload types of `response_item` lines; the oldest rollouts wrote them bare, without the envelope. */
const RESPONSE_ITEM_TYPES = new Set([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "web_search_call",
]);

function callId(payload: Fields, what: string): string {
  const id = payload.call_id ?? payload.id;
  if (typeof id !== "string" || id === "") throw new RecordProblem(`${what} has no string call_id`);
  return boundedToolField(id, "call_id", what);
}

/**
 * The tool's name as the model called it. A namespaced call (MCP tools in newer Codex: name `js`,
 * namespace `mcp__node_repl__`) gets Codex's flat name, `mcp__node_repl__js`.
 */
function toolName(payload: Fields, what: string): string {
  if (typeof payload.name !== "string" || payload.name === "")
    throw new RecordProblem(`${what} has no string name`);
  const namespace = typeof payload.namespace === "string" ? payload.namespace.replace(/_+$/, "") : "";
  const name = namespace ? `${namespace}__${payload.name.replace(/^_+/, "")}` : payload.name;
  return boundedToolField(name, "name", what);
}

const subtract = (later: TokenUsage, earlier: TokenUsage): TokenUsage => ({
  input: Math.max(0, later.input - earlier.input),
  cached: Math.max(0, later.cached - earlier.cached),
  output: Math.max(0, later.output - earlier.output),
});

const exitCodeOf = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);

/**
 * An incremental converter of a Codex CLI rollout (`rollout-<time>-<uuid>.jsonl`), one line at a
 * time. Content comes from `response_item` lines; a prompt is posted once, from its `response_item`
 * message or its `event_msg` `user_message` copy, whichever the rollout has. Turns follow
 * `task_started` / `task_complete` events (in rollouts without them, a prompt after agent activity
 * starts a new one); per-turn tokens come from the difference of the cumulative `token_count`
 * totals. A command still running when its output was recorded gets its result when it exits
 * (`exec_command_end`, with its exit code and whole output), even in a later turn (a dev server
 * outlives the task that started it), or at the end of input with what it printed. Unknown
 * line and payload types are skipped; lines that are not JSON or have the wrong shape are reported.
 */
export function createCodexRolloutConverter(options: CodexRolloutOptions = {}): LineConverter {
  const includeUserPrompts = options.includeUserPrompts ?? true;
  const turn = new TurnTracker();
  let sessionId: string | undefined;
  let totals: TokenUsage = { input: 0, cached: 0, output: 0 };
  let totalsAtTurnStart = totals;
  // Whether a token_count with figures arrived in the current turn: without one its figures are unknown.
  let countedInTurn = false;
  let taskEvents = false;
  // A prompt is written twice (response_item message, event_msg user_message): the copy still to come.
  let echo: { source: "message" | "event"; text: string } | undefined;
  // Outputs of commands still running, held until they exit (or the input ends): a result given
  // earlier would call a command that then fails a success.
  const running = new Map<string, string>();
  // Exit codes and patch outcomes that arrived before their call's output.
  const exits = new Map<string, number>();
  const patches = new Map<string, boolean>();
  // Tool names by call id: Codex reports a call it could not run as `<tool> failed: <why>`.
  const names = new Map<string, string>();
  // Ids of web searches whose end event came before the search item (which has no id).
  const searches: { id: string; query: unknown }[] = [];
  let unnamedSearches = 0;

  function begin(timestamp: unknown): void {
    turn.begin(timestamp);
    totalsAtTurnStart = totals;
    countedInTurn = false;
  }

  /** At the end of input, results of commands that never reported their exit: their output so far. */
  function release(): ThreadItem[] {
    const items: ThreadItem[] = [];
    for (const [id, output] of running) items.push(toolResultItem({ invocationId: id, output }));
    running.clear();
    return items;
  }

  function finish(timestamp?: unknown): ThreadItem[] {
    exits.clear();
    patches.clear();
    names.clear();
    const usage = countedInTurn ? subtract(totals, totalsAtTurnStart) : null;
    return turn.close({ usage, at: timestamp });
  }

  function activity(timestamp: unknown): void {
    if (!turn.open) begin(timestamp);
    turn.activity(timestamp);
  }

  /** A prompt from one of its two copies; `typed` (its text without images) pairs the copies. */
  function prompt(
    text: string,
    typed: string,
    source: "message" | "event",
    timestamp: unknown,
  ): ThreadItem[] {
    const key = typed.trim();
    if (echo && echo.source !== source && echo.text === key) {
      echo = undefined;
      return [];
    }
    echo = { source, text: key };
    // Without task events, a prompt after agent activity starts a new turn; with them, a prompt
    // typed while a task runs belongs to that task.
    const items = !taskEvents && turn.active ? finish(timestamp) : [];
    if (!turn.open) begin(timestamp);
    const attached = attachedContext(text);
    if (attached) items.push(statusItem(attached.context));
    if (includeUserPrompts) items.push(plainPostItem(attached ? attached.request : text));
    return items;
  }

  function message(payload: Fields, timestamp: unknown): ThreadItem[] {
    if (payload.role === "assistant") {
      const text = partsText(payload.content);
      if (text.trim() === "") return [];
      activity(timestamp);
      return [textItem(text)];
    }
    if (payload.role !== "user") return [];
    // Each content item Codex injected (instructions, environment, skills…) is left out of the prompt.
    const items: ThreadItem[] = [];
    const typed: unknown[] = [];
    const content = typeof payload.content === "string" ? [{ text: payload.content }] : payload.content;
    for (const part of Array.isArray(content) ? content : []) {
      const text = object(part)?.text;
      const fragment = typeof text === "string" ? injectedFragment(text) : undefined;
      if (fragment === undefined) typed.push(part);
      else if (fragment !== "skip") items.push(statusItem(fragment));
    }
    const text = partsText(typed);
    if (text.trim() === "") return items;
    return [...items, ...prompt(text, typedText(typed), "message", timestamp)];
  }

  function userMessage(payload: Fields, timestamp: unknown): ThreadItem[] {
    const typed = typeof payload.message === "string" ? payload.message : "";
    // The event copy of injected text: its response item gives the status.
    if (injectedFragment(typed) !== undefined) return [];
    const images = Array.isArray(payload.images) ? payload.images.map(codexImage) : [];
    const text = [typed, ...images].filter((part) => part !== "").join("\n");
    if (text.trim() === "") return [];
    return prompt(text, typed, "event", timestamp);
  }

  /** A tool call; `json` is the text `input` was parsed from, when it was (Codex's `arguments`). */
  function toolCall(name: string, invocationId: string, input: unknown, json?: string): ThreadItem {
    const item =
      json === undefined
        ? toolCallItem({ name, invocationId, input })
        : toolCallItemOfJson({ name, invocationId, input, json });
    names.set(invocationId, name);
    const brief = name === "write_stdin" ? writeStdinBrief(input) : undefined;
    return brief ? withBrief(item, brief) : item;
  }

  function webSearch(payload: Fields, timestamp: unknown): ThreadItem[] {
    activity(timestamp);
    const action = object(payload.action) ?? {};
    const given = payload.call_id ?? payload.id;
    let id: string;
    if (typeof given === "string" && given !== "") id = given;
    else {
      // Newer rollouts give the id only to the `web_search_end` event written just before.
      const index = searches.findIndex((search) => search.query === action.query);
      id = index === -1 ? `web_search_${++unnamedSearches}` : searches.splice(index, 1)[0]!.id;
    }
    const invocationId = boundedToolField(id, "id", "web_search_call");
    const items = [toolCall("web_search", invocationId, action)];
    // The search ran on the server; its results are not recorded, only that it completed.
    if (payload.status === "completed" || payload.status === "failed") {
      items.push(toolResultItem({ invocationId, output: "", isError: payload.status === "failed" }));
    }
    return items;
  }

  function output(payload: Fields, timestamp: unknown): ThreadItem[] {
    const id = callId(payload, String(payload.type));
    const read = readToolOutput(payload.output);
    activity(timestamp);
    const exit = exits.get(id);
    if (read.running && exit === undefined) {
      running.set(id, read.output);
      return [];
    }
    const name = names.get(id);
    const isError =
      failedOutput(read) ||
      (exit !== undefined && exit !== 0) ||
      patches.get(id) === false ||
      (name !== undefined &&
        read.output.startsWith(name) &&
        read.output.startsWith(" failed: ", name.length));
    const result = toolResultItem({ invocationId: id, output: read.output, isError });
    return [read.totalLines === undefined ? result : withTotalLines(result, read.totalLines)];
  }

  function responseItem(payload: Fields, timestamp: unknown): ThreadItem[] {
    switch (payload.type) {
      case "message":
        return message(payload, timestamp);
      case "reasoning": {
        let text = partsText(payload.summary);
        if (text.trim() === "") text = partsText(payload.content);
        if (text.trim() === "") return [];
        activity(timestamp);
        return [thinkingItem(text)];
      }
      case "function_call": {
        const name = toolName(payload, "function_call");
        const id = callId(payload, "function_call");
        activity(timestamp);
        const { arguments: args } = payload;
        if (typeof args !== "string") return [toolCall(name, id, args ?? {})];
        let input: unknown;
        try {
          input = JSON.parse(args);
        } catch {
          // Arguments that are not JSON are kept as the model wrote them.
          return [toolCall(name, id, args)];
        }
        if (input === null) return [toolCall(name, id, {})];
        return [toolCall(name, id, input, args)];
      }
      case "custom_tool_call": {
        const name = toolName(payload, "custom_tool_call");
        const id = callId(payload, "custom_tool_call");
        activity(timestamp);
        return [toolCall(name, id, payload.input ?? "")];
      }
      case "local_shell_call": {
        const id = callId(payload, "local_shell_call");
        activity(timestamp);
        return [toolCall("local_shell", id, payload.action ?? {})];
      }
      case "web_search_call":
        return webSearch(payload, timestamp);
      case "function_call_output":
      case "custom_tool_call_output":
        return output(payload, timestamp);
      default:
        return [];
    }
  }

  function commandEnd(payload: Fields): ThreadItem[] {
    const id = typeof payload.call_id === "string" ? payload.call_id : undefined;
    const exit = exitCodeOf(payload.exit_code);
    const failed = (exit !== undefined && exit !== 0) || payload.status === "failed";
    const whole = typeof payload.aggregated_output === "string" ? payload.aggregated_output : undefined;
    if (id !== undefined && running.has(id)) {
      const held = running.get(id)!;
      running.delete(id);
      return [toolResultItem({ invocationId: id, output: whole ?? held, isError: failed })];
    }
    if (payload.source === "user_shell") {
      // A command the user ran with `!`: not the agent's tool call.
      const command = Array.isArray(payload.command) ? payload.command.at(-1) : undefined;
      const detail = [typeof command === "string" ? `$ ${command}` : "", whole ?? ""]
        .filter(Boolean)
        .join("\n");
      return [
        statusItem({ status: "user_shell_command", ...(detail ? { detail: statusDetail(detail) } : {}) }),
      ];
    }
    if (id !== undefined && exit !== undefined) exits.set(id, exit);
    return [];
  }

  function event(payload: Fields, timestamp: unknown): ThreadItem[] {
    switch (payload.type) {
      case "task_started":
      case "turn_started": {
        taskEvents = true;
        const items = turn.active ? finish(timestamp) : [];
        begin(timestamp);
        return items;
      }
      case "task_complete":
      case "turn_complete":
        return finish(timestamp);
      case "token_count": {
        const usage = openAiUsage(object(payload.info)?.total_token_usage);
        if (usage) {
          totals = usage;
          countedInTurn = true;
        }
        return [];
      }
      case "user_message":
        return userMessage(payload, timestamp);
      case "exec_command_end":
        return commandEnd(payload);
      case "patch_apply_end":
        if (typeof payload.call_id === "string") patches.set(payload.call_id, payload.success !== false);
        return [];
      case "web_search_end":
        if (typeof payload.call_id === "string" && payload.call_id !== "") {
          searches.push({ id: payload.call_id, query: object(payload.action)?.query ?? payload.query });
        }
        return [];
      case "turn_aborted": {
        const reason = typeof payload.reason === "string" ? payload.reason : undefined;
        activity(timestamp);
        const aborted = statusItem({ status: "turn_aborted", ...(reason ? { detail: reason } : {}) });
        return [aborted, ...finish(timestamp)];
      }
      case "error":
      case "stream_error": {
        const detail = typeof payload.message === "string" ? statusDetail(payload.message) : undefined;
        return [statusItem({ status: payload.type, ...(detail ? { detail } : {}) })];
      }
      default:
        return [];
    }
  }

  return lineConverter({
    skim(line) {
      const skimmed = skimEventLine(line);
      if (skimmed === undefined) return undefined;
      if (skimmed !== "ignored") {
        totals = skimmed;
        countedInTurn = true;
      }
      return [];
    },
    record(record) {
      const payload = object(record.payload);
      switch (record.type) {
        case "session_meta": {
          if (!payload) throw new RecordProblem("session_meta line has no payload object");
          if (typeof payload.id === "string") sessionId ??= payload.id;
          const version =
            typeof payload.cli_version === "string" ? `codex ${payload.cli_version}` : undefined;
          return [
            statusItem({
              status: "session_started",
              ...(version ? { detail: statusDetail(version) } : {}),
              brief: "Session started",
            }),
          ];
        }
        case "response_item":
          if (!payload) throw new RecordProblem("response_item line has no payload object");
          return responseItem(payload, record.timestamp);
        case "event_msg":
          if (!payload) throw new RecordProblem("event_msg line has no payload object");
          return event(payload, record.timestamp);
        case "compacted":
          return [statusItem({ status: "context_compacted", brief: "Context compacted" })];
        case "turn_context":
          return [];
        default:
          if (typeof record.type === "string" && RESPONSE_ITEM_TYPES.has(record.type)) {
            return responseItem(record, record.timestamp);
          }
          // The oldest rollouts open with a bare `{id, timestamp, instructions}` header.
          if (
            record.type === undefined &&
            typeof record.id === "string" &&
            typeof record.timestamp === "string"
          ) {
            sessionId ??= record.id;
            return [];
          }
          if (typeof record.type !== "string" && record.record_type === undefined) {
            throw new RecordProblem("line has no string type");
          }
          return [];
      }
    },
    end: () => [...release(), ...finish()],
    sessionId: () => sessionId,
  });
}

const TIMESTAMP_OPENING = '{"timestamp":"';
const EVENT_OPENING = '","type":"event_msg","payload":{"type":"';
/** The longest timestamp a skimmed line may have (Codex writes 24 characters). */
const MAX_TIMESTAMP_CHARS = 40;
/**
 * Events this adapter takes nothing from: copies of what `response_item` lines hold (the agent's
 * messages and reasoning). `token_count` lines are read for their totals only.
 */
const IGNORED_EVENTS = new Set(["agent_message", "agent_reasoning", "agent_reasoning_raw_content"]);
const TOTAL_USAGE_OPENING = '"info":{"total_token_usage":{';
/** Codex's token usage object: names and whole numbers only. */
const FLAT_COUNTS = /^\{"[a-z_]+":\d+(?:,"[a-z_]+":\d+)*\}$/;

/**
 * What an `event_msg` line Codex writes by the hundred gives, read from its text without parsing
 * the rest: "ignored" for an event this adapter takes nothing from, the cumulative totals of a
 * `token_count` (whose rate limits and last usage make it the largest line of a rollout), or
 * undefined to parse the line as usual: anything not in exactly the shape Codex writes
 * (`{"timestamp":"…","type":"event_msg","payload":{"type":"…"`, ending in `}`), and a
 * `token_count` whose totals are not a flat object of numbers. A cut line does not end in `}`, so
 * it is still parsed and reported.
 */
function skimEventLine(line: string): TokenUsage | "ignored" | undefined {
  if (!line.startsWith(TIMESTAMP_OPENING) || line.charCodeAt(line.length - 1) !== 0x7d) return undefined;
  const opening = line.indexOf(EVENT_OPENING, TIMESTAMP_OPENING.length);
  if (opening === -1 || opening > TIMESTAMP_OPENING.length + MAX_TIMESTAMP_CHARS) return undefined;
  const typeStart = opening + EVENT_OPENING.length;
  const typeEnd = line.indexOf('"', typeStart);
  if (typeEnd === -1) return undefined;
  const type = line.slice(typeStart, typeEnd);
  if (IGNORED_EVENTS.has(type)) return "ignored";
  if (type !== "token_count" || !line.startsWith(TOTAL_USAGE_OPENING, typeEnd + 2)) return undefined;
  const usageStart = typeEnd + 2 + TOTAL_USAGE_OPENING.length - 1;
  const usageEnd = line.indexOf("}", usageStart);
  if (usageEnd === -1) return undefined;
  const usage = line.slice(usageStart, usageEnd + 1);
  return FLAT_COUNTS.test(usage) ? openAiUsage(JSON.parse(usage)) : undefined;
}

/** Converts a whole Codex CLI rollout (JSONL text or UTF-8 bytes) into thread items. */
export function convertCodexRollout(
  input: string | Uint8Array,
  options: CodexRolloutOptions = {},
): ConversionResult {
  return convertLines(input, createCodexRolloutConverter(options));
}
