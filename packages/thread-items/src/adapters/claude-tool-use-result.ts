import type { ToolResultItem } from "../schema/thread-item-schema.js";
import { object } from "./record-fields.js";

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;

const NOTHING: Readonly<{ subagent?: SubagentSummary; imageBytes?: number }> = Object.freeze({});

/** What a subagent (Task/Agent tool) reported about its own run, in `metadata.tool.subagent`. */
export interface SubagentSummary {
  agent_id: string;
  status?: string;
  /** Tokens of the subagent's last model call (its context at the end), as Claude Code reports them. */
  total_tokens?: number;
  tool_uses?: number;
  duration_ms?: number;
}

/**
 * What Claude Code's `toolUseResult` (the SDK's `tool_use_result`) adds to a tool_result: the
 * subagent's own figures, and the size of an image the Read tool read (its copy of the image may
 * already be a `blob:sha256:` ref, which has no size).
 */
export function toolUseResultDetails(value: unknown): { subagent?: SubagentSummary; imageBytes?: number } {
  const result = object(value);
  if (!result || (result.agentId === undefined && result.type !== "image")) return NOTHING;
  const details: { subagent?: SubagentSummary; imageBytes?: number } = {};
  if (typeof result.agentId === "string" && result.agentId !== "") {
    const subagent: SubagentSummary = { agent_id: result.agentId };
    if (typeof result.status === "string") subagent.status = result.status;
    const tokens = count(result.totalTokens);
    if (tokens !== undefined) subagent.total_tokens = tokens;
    const tools = count(result.totalToolUseCount);
    if (tools !== undefined) subagent.tool_uses = tools;
    const duration = count(result.totalDurationMs);
    if (duration !== undefined) subagent.duration_ms = duration;
    details.subagent = subagent;
  }
  const file = object(result.file);
  const size = count(file?.originalSize);
  if (result.type === "image" && size !== undefined) details.imageBytes = size;
  return details;
}

/** The tool_result with the subagent's figures in `metadata.tool.subagent`. */
export function withSubagent(item: ToolResultItem, subagent: SubagentSummary | undefined): ToolResultItem {
  if (!subagent) return item;
  return { ...item, metadata: { ...item.metadata, tool: { ...item.metadata.tool, subagent } } };
}
