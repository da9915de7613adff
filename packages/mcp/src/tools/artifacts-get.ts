import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { type ContentRegistry, createArtifactsGetTool } from "@stowage/hot-state";
import { type McpTool, textResult } from "./tool.js";

/**
 * `artifacts_get`: hot-state's tool as it is (its schema, its strict ids, its 8,000-character
 * pages), over the principal's content registry.
 */
export function artifactsGetTool(registry: ContentRegistry): McpTool {
  const tool = createArtifactsGetTool({ registry });
  return {
    definition: {
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as Tool["inputSchema"],
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async call(args, signal) {
      const result = await tool.execute(args, { signal });
      const more =
        result.next_offset === null
          ? ""
          : `\n[${result.total_chars - result.next_offset} more characters: call artifacts_get with offset=${result.next_offset}]`;
      const { content, ...meta } = result;
      return textResult(content + more, { ...meta, content });
    },
  };
}
