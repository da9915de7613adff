/** A JSON Schema (draft 2020-12) document as a plain object. */
export type JsonSchema = Record<string, unknown>;

/** The parts of a tool every provider format is built from. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Readonly<JsonSchema>;
}

/** An Anthropic Messages API tool: `{ name, description, input_schema }`. */
export function toAnthropicTool({ name, description, inputSchema }: ToolDefinition) {
  return { name, description, input_schema: inputSchema };
}
