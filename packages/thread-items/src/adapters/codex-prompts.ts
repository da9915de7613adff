import { plainPostItem, statusItem, textItem } from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { codexImage, partsText, typedText } from "./codex-content.js";
import { activity, beginTurn, type CodexState, finishTurn } from "./codex-state.js";
import { attachedContext, injectedFragment } from "./codex-user-text.js";
import { type Fields, object } from "./record-fields.js";

/** A prompt from one of its two copies; `typed` (its text without images) pairs the copies. */
function prompt(
  state: CodexState,
  text: string,
  typed: string,
  source: "message" | "event",
  timestamp: unknown,
): ThreadItem[] {
  const key = typed.trim();
  if (state.echo && state.echo.source !== source && state.echo.text === key) {
    state.echo = undefined;
    return [];
  }
  state.echo = { source, text: key };
  // Without task events, a prompt after agent activity starts a new turn; with them, a prompt
  // typed while a task runs belongs to that task.
  const items = !state.taskEvents && state.turn.active ? finishTurn(state, timestamp) : [];
  if (!state.turn.open) beginTurn(state, timestamp);
  const attached = attachedContext(text);
  if (attached) items.push(statusItem(attached.context));
  if (state.includeUserPrompts) items.push(plainPostItem(attached ? attached.request : text));
  return items;
}

/** A `response_item` message: the agent's text, or a prompt without what Codex injected into it. */
export function messageItems(state: CodexState, payload: Fields, timestamp: unknown): ThreadItem[] {
  if (payload.role === "assistant") {
    const text = partsText(payload.content);
    if (text.trim() === "") return [];
    activity(state, timestamp);
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
  return [...items, ...prompt(state, text, typedText(typed), "message", timestamp)];
}

/** A `user_message` event: the event copy of a prompt (the only one in rollouts without response items). */
export function userMessageItems(state: CodexState, payload: Fields, timestamp: unknown): ThreadItem[] {
  const typed = typeof payload.message === "string" ? payload.message : "";
  // The event copy of injected text: its response item gives the status.
  if (injectedFragment(typed) !== undefined) return [];
  const images = Array.isArray(payload.images) ? payload.images.map(codexImage) : [];
  const text = [typed, ...images].filter((part) => part !== "").join("\n");
  if (text.trim() === "") return [];
  return prompt(state, text, typed, "event", timestamp);
}
