import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { StowageError } from "@stowage/core";
import { z } from "zod";

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

/** Parses tool arguments; INVALID_INPUT (reason `INVALID_TOOL_INPUT`) naming every issue. */
export function parseArgs<T extends z.ZodType>(schema: T, args: unknown, tool: string): z.infer<T> {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(input)"}: ${issue.message}`);
  throw new StowageError("INVALID_INPUT", `${tool} input: ${issues.slice(0, 5).join("; ")}`, {
    reason: "INVALID_TOOL_INPUT",
    details: { issues },
  });
}

/**
 * A successful result: the text the model reads and the same facts as structured content. Both must
 * be complete on their own: some clients (Claude Code) give the model only `structuredContent`.
 */
export function textResult(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}
