import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { StowageError } from "@stowage/core";
import { z } from "zod";
import { describeIssue, describeIssues, SHOWN_ISSUES } from "../errors/issues.js";

/** A tool as the server offers it: its `tools/list` entry and what a call does. */
export interface McpTool {
  definition: Tool;
  /** Runs the tool; throws StowageError, which the server turns into an error result. */
  call(args: unknown, signal: AbortSignal): Promise<CallToolResult>;
}

/** The JSON Schema of a zod input schema, as `tools/list` carries it. */
export function inputSchemaOf(schema: z.ZodType): Tool["inputSchema"] {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return json as Tool["inputSchema"];
}

/**
 * Parses tool arguments; INVALID_INPUT (reason `INVALID_TOOL_INPUT`) naming the first issues in a
 * line: a hostile input (thousands of unknown keys, a key of megabytes) costs the model's context
 * a line, not an echo of itself.
 */
export function parseArgs<T extends z.ZodType>(schema: T, args: unknown, tool: string): z.infer<T> {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const { issues } = parsed.error;
  throw new StowageError("INVALID_INPUT", `${tool} input: ${describeIssues(issues)}`, {
    reason: "INVALID_TOOL_INPUT",
    details: { issues: issues.slice(0, SHOWN_ISSUES).map(describeIssue), issueCount: issues.length },
  });
}

/**
 * A successful result: the text the model reads and the same facts as structured content. Both must
 * be complete on their own: some clients (Claude Code) give the model only `structuredContent`.
 */
export function textResult(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}
