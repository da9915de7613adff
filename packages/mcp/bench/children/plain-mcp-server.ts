// The peer: the SDK's own high-level McpServer, serving each `<id>.bash.log` of a directory as a
// resource with a bare fs.readFile (no id checks, no paging, no sanitizing), over stdio.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const dir = process.argv[2]!;
const server = new McpServer({ name: "plain", version: "1.0.0" });
server.registerResource(
  "log",
  new ResourceTemplate("artifact://{id}", { list: undefined }),
  { mimeType: "text/plain" },
  async (uri, { id }) => ({
    contents: [
      { uri: uri.href, mimeType: "text/plain", text: await readFile(join(dir, `${id}.bash.log`), "utf8") },
    ],
  }),
);
await server.connect(new StdioServerTransport());
