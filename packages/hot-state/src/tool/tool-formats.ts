import type { JsonSchema } from "../schemas/json-schemas.js";

/** The parts of a tool every provider format is built from. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Readonly<JsonSchema>;
}

/** An Anthropic Messages API tool: `{ name, description, input_schema }`. */
export function toAnthropicTool(tool: ToolDefinition) {
  return { name: tool.name, description: tool.description, input_schema: tool.inputSchema };
}

/** An OpenAI Chat Completions tool: `{ type: "function", function: { name, description, parameters } }`. */
export function toOpenAITool(tool: ToolDefinition) {
  return {
    type: "function" as const,
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  };
}

/** An OpenAI Responses API tool: `{ type: "function", name, description, parameters }`. */
export function toOpenAIResponsesTool(tool: ToolDefinition) {
  return {
    type: "function" as const,
    name: tool.name,
    description: tool.description,
    parameters: tool.inputSchema,
  };
}
