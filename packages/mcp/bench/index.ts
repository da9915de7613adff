// Reading 100 artifacts of 64 KiB over MCP stdio (the stowage-mcp bin in a child process, the
// SDK's Client here) against reading them directly through @stowage/artifacts' router (the raw
// baseline: no protocol at all) and against the peer, the SDK's own high-level McpServer serving
// the same files with a bare fs.readFile over stdio. Both sides of a case have the same number of
// reads in flight. Two more cases say where the time goes: the same server in process (the SDK's
// InMemoryTransport: the protocol layer without JSON, pipe or second process), and the floor, the
// SDK's bare server over stdio against the fs.readFile it wraps.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createSessionFiles } from "@stowage/artifacts";
import { runBenchmarks } from "@stowage/bench-kit";
import { mapConcurrent } from "@stowage/core";
import { createStowageMcpServer } from "../src/index.js";
import { stowageMcpCommand } from "../test/stdio-command.js";

const ARTIFACTS = 100;
const ARTIFACT_BYTES = 64 * 1024;
const SESSION_ID = "bench-session";
const CONCURRENCY = 8;
const ids = Array.from({ length: ARTIFACTS }, (_, id) => id);

const base = await mkdtemp(join(tmpdir(), "stowage-mcp-bench-"));
const sessions = createSessionFiles({ dir: base });
const session = await sessions.create(SESSION_ID);
// Log-like lines of varying length, cut to exactly 64 KiB.
for (let n = 0; n < ARTIFACTS; n++) {
  let text = "";
  for (let i = 0; text.length < ARTIFACT_BYTES; i++)
    text += `[${n}:${i}] ${"output ".repeat(1 + ((i * 7) % 20))}\n`;
  await session.artifacts.saveArtifact("bash", text.slice(0, ARTIFACT_BYTES - 1) + "\n");
}

async function connect(command: { command: string; args: string[] }): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ ...command, stderr: "ignore" }));
  return client;
}

const ours = await connect(stowageMcpCommand(["--sessions-dir", base, "--session", SESSION_ID]));
const peerCommand = stowageMcpCommand([]);
peerCommand.args.splice(
  -1,
  1,
  new URL("./children/plain-mcp-server.ts", import.meta.url).pathname,
  session.artifacts.dir,
);
const peer = await connect(peerCommand);
const inProcess = new Client({ name: "bench-in-process", version: "1.0.0" });
{
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createStowageMcpServer({ session }).connect(serverSide);
  await inProcess.connect(clientSide);
}

/** Every artifact, `inFlight` reads at a time. */
async function readAll(read: (uri: string) => Promise<string>, inFlight: number): Promise<void> {
  await mapConcurrent(ids, inFlight, async (id) => {
    const text = await read(`artifact://${id}`);
    if (text.length !== ARTIFACT_BYTES) throw new Error(`artifact://${id}: ${text.length} characters`);
  });
}
const direct = async (uri: string) => (await session.router.read(uri)).text;
const plainReadFile = (uri: string) =>
  readFile(join(session.artifacts.dir, `${uri.slice("artifact://".length)}.bash.log`), "utf8");
const overMcp = (client: Client) => async (uri: string) =>
  ((await client.readResource({ uri })).contents[0] as { text: string }).text;

try {
  await runBenchmarks("@stowage/mcp", [
    {
      name: `${ARTIFACTS} × 64 KiB artifacts, one read at a time: over MCP stdio (stowage-mcp) vs directly through the artifacts router`,
      target: { kind: "speed", min: 0.5 },
      units: { count: ARTIFACTS * ARTIFACT_BYTES, label: "B" },
      rounds: 15,
      ours: () => readAll(overMcp(ours), 1),
      baseline: () => readAll(direct, 1),
    },
    {
      name: `${ARTIFACTS} × 64 KiB artifacts, ${CONCURRENCY} reads in flight: over MCP stdio (stowage-mcp) vs directly through the artifacts router`,
      target: { kind: "speed", min: 0.5 },
      units: { count: ARTIFACTS * ARTIFACT_BYTES, label: "B" },
      rounds: 15,
      ours: () => readAll(overMcp(ours), CONCURRENCY),
      baseline: () => readAll(direct, CONCURRENCY),
    },
    {
      name: `${ARTIFACTS} × 64 KiB artifacts over MCP stdio, one at a time: stowage-mcp vs the SDK's McpServer with fs.readFile (peer)`,
      target: { kind: "speed", min: 0.8 },
      units: { count: ARTIFACTS * ARTIFACT_BYTES, label: "B" },
      rounds: 15,
      ours: () => readAll(overMcp(ours), 1),
      baseline: () => readAll(overMcp(peer), 1),
    },
    {
      name: `where the time goes: the same server in process (InMemoryTransport: no JSON, no pipe) vs directly through the artifacts router`,
      target: { kind: "speed", min: 0.5 },
      units: { count: ARTIFACTS * ARTIFACT_BYTES, label: "B" },
      rounds: 15,
      ours: () => readAll(overMcp(inProcess), 1),
      baseline: () => readAll(direct, 1),
    },
    {
      name: `the floor: the SDK's McpServer with fs.readFile over stdio vs that fs.readFile in process`,
      target: { kind: "speed", min: 0.5 },
      units: { count: ARTIFACTS * ARTIFACT_BYTES, label: "B" },
      rounds: 15,
      ours: () => readAll(overMcp(peer), 1),
      baseline: () => readAll(plainReadFile, 1),
    },
  ]);
} finally {
  await Promise.all([ours.close(), peer.close(), inProcess.close()]);
  await rm(base, { recursive: true, force: true });
}
