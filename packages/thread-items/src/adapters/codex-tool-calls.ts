import { statusItem, toolCallItem, toolCallItemOfJson, toolResultItem } from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { withBrief, withTotalLines, writeStdinBrief } from "./codex-briefs.js";
import { activity, type CodexState } from "./codex-state.js";
import { failedOutput, readToolOutput } from "./codex-tool-output.js";
import { RecordProblem } from "./conversion.js";
import { boundedToolField, type Fields, object, statusDetail } from "./record-fields.js";

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

const exitCodeOf = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);

/** A tool call; `json` is the text `input` was parsed from, when it was (Codex's `arguments`). */
function toolCall(
  state: CodexState,
  name: string,
  invocationId: string,
  input: unknown,
  json?: string,
): ThreadItem {
  const item =
    json === undefined
      ? toolCallItem({ name, invocationId, input })
      : toolCallItemOfJson({ name, invocationId, input, json });
  state.names.set(invocationId, name);
  const brief = name === "write_stdin" ? writeStdinBrief(input) : undefined;
  return brief ? withBrief(item, brief) : item;
}

/** A `function_call`: its `arguments` are JSON text, kept as written when they are not JSON. */
export function functionCallItems(state: CodexState, payload: Fields, timestamp: unknown): ThreadItem[] {
  const name = toolName(payload, "function_call");
  const id = callId(payload, "function_call");
  activity(state, timestamp);
  const { arguments: args } = payload;
  if (typeof args !== "string") return [toolCall(state, name, id, args ?? {})];
  let input: unknown;
  try {
    input = JSON.parse(args);
  } catch {
    // Arguments that are not JSON are kept as the model wrote them.
    return [toolCall(state, name, id, args)];
  }
  if (input === null) return [toolCall(state, name, id, {})];
  return [toolCall(state, name, id, input, args)];
}

export function customToolCallItems(state: CodexState, payload: Fields, timestamp: unknown): ThreadItem[] {
  const name = toolName(payload, "custom_tool_call");
  const id = callId(payload, "custom_tool_call");
  activity(state, timestamp);
  return [toolCall(state, name, id, payload.input ?? "")];
}

export function localShellCallItems(state: CodexState, payload: Fields, timestamp: unknown): ThreadItem[] {
  const id = callId(payload, "local_shell_call");
  activity(state, timestamp);
  return [toolCall(state, "local_shell", id, payload.action ?? {})];
}

export function webSearchItems(state: CodexState, payload: Fields, timestamp: unknown): ThreadItem[] {
  activity(state, timestamp);
  const action = object(payload.action) ?? {};
  const given = payload.call_id ?? payload.id;
  let id: string;
  if (typeof given === "string" && given !== "") id = given;
  else {
    // Newer rollouts give the id only to the `web_search_end` event written just before.
    const index = state.searches.findIndex((search) => search.query === action.query);
    id = index === -1 ? `web_search_${++state.unnamedSearches}` : state.searches.splice(index, 1)[0]!.id;
  }
  const invocationId = boundedToolField(id, "id", "web_search_call");
  const items = [toolCall(state, "web_search", invocationId, action)];
  // The search ran on the server; its results are not recorded, only that it completed.
  if (payload.status === "completed" || payload.status === "failed") {
    items.push(toolResultItem({ invocationId, output: "", isError: payload.status === "failed" }));
  }
  return items;
}

/** A call's output (`function_call_output`, `custom_tool_call_output`); held while its command runs. */
export function toolOutputItems(state: CodexState, payload: Fields, timestamp: unknown): ThreadItem[] {
  const id = callId(payload, String(payload.type));
  const read = readToolOutput(payload.output);
  activity(state, timestamp);
  const exit = state.exits.get(id);
  if (read.running && exit === undefined) {
    state.running.set(id, read.output);
    return [];
  }
  const name = state.names.get(id);
  const isError =
    failedOutput(read) ||
    (exit !== undefined && exit !== 0) ||
    state.patches.get(id) === false ||
    (name !== undefined && read.output.startsWith(name) && read.output.startsWith(" failed: ", name.length));
  const result = toolResultItem({ invocationId: id, output: read.output, isError });
  return [read.totalLines === undefined ? result : withTotalLines(result, read.totalLines)];
}

/**
 * An `exec_command_end` event: the result of a command still running when its output was
 * recorded, a user's `!` command, or an exit code for an output still to come.
 */
export function commandEndItems(state: CodexState, payload: Fields): ThreadItem[] {
  const id = typeof payload.call_id === "string" ? payload.call_id : undefined;
  const exit = exitCodeOf(payload.exit_code);
  const failed = (exit !== undefined && exit !== 0) || payload.status === "failed";
  const whole = typeof payload.aggregated_output === "string" ? payload.aggregated_output : undefined;
  if (id !== undefined && state.running.has(id)) {
    const held = state.running.get(id)!;
    state.running.delete(id);
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
  if (id !== undefined && exit !== undefined) state.exits.set(id, exit);
  return [];
}
