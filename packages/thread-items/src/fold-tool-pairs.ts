import { describeValue, StowageError } from "@stowage/core";
import type { ThreadItem, ToolCallItem, ToolResultItem } from "./schema/thread-item-schema.js";

/** A tool call folded with its result (either may be missing: still running, or the call was not seen). */
export interface FoldedToolPair {
  kind: "tool";
  invocationId: string;
  /** From the call; a result carries no name. */
  name: string | undefined;
  call: ToolCallItem | undefined;
  result: ToolResultItem | undefined;
}

export type FoldedThreadEntry = { kind: "item"; item: ThreadItem } | FoldedToolPair;

function invocationOf(item: ThreadItem, type: "tool_call" | "tool_result"): string | undefined {
  const metadata = item.metadata as { type?: unknown; tool?: { invocation_id?: unknown } } | undefined;
  if (metadata?.type !== type) return undefined;
  const id = metadata.tool?.invocation_id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/**
 * Folds each `tool_call` with the `tool_result` of the same `invocation_id` into one entry, at the
 * place of whichever came first; every other item passes through in order. A result pairs with the
 * earliest call of its id that has no result yet; unmatched calls and results stay single.
 */
export function foldToolPairs(items: readonly ThreadItem[]): FoldedThreadEntry[] {
  if (!Array.isArray(items)) {
    throw new StowageError(
      "INVALID_INPUT",
      `items must be an array of thread items, got ${describeValue(items)}`,
    );
  }
  const entries: FoldedThreadEntry[] = [];
  // Pairs still missing one side, per invocation id, oldest first.
  const waitingForResult = new Map<string, FoldedToolPair[]>();
  const waitingForCall = new Map<string, FoldedToolPair[]>();
  const take = (waiting: Map<string, FoldedToolPair[]>, id: string) => {
    const queue = waiting.get(id);
    const pair = queue?.shift();
    if (queue && queue.length === 0) waiting.delete(id);
    return pair;
  };
  const wait = (waiting: Map<string, FoldedToolPair[]>, id: string, pair: FoldedToolPair) => {
    const queue = waiting.get(id);
    if (queue) queue.push(pair);
    else waiting.set(id, [pair]);
  };

  for (const item of items) {
    const callId = invocationOf(item, "tool_call");
    if (callId !== undefined) {
      const call = item as ToolCallItem;
      const pair = take(waitingForCall, callId);
      if (pair) {
        pair.call = call;
        pair.name = call.metadata.tool.name;
      } else {
        const fresh: FoldedToolPair = {
          kind: "tool",
          invocationId: callId,
          name: call.metadata.tool.name,
          call,
          result: undefined,
        };
        entries.push(fresh);
        wait(waitingForResult, callId, fresh);
      }
      continue;
    }
    const resultId = invocationOf(item, "tool_result");
    if (resultId !== undefined) {
      const result = item as ToolResultItem;
      const pair = take(waitingForResult, resultId);
      if (pair) pair.result = result;
      else {
        const fresh: FoldedToolPair = {
          kind: "tool",
          invocationId: resultId,
          name: undefined,
          call: undefined,
          result,
        };
        entries.push(fresh);
        wait(waitingForCall, resultId, fresh);
      }
      continue;
    }
    entries.push({ kind: "item", item });
  }
  return entries;
}
