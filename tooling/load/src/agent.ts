import { createHash, randomBytes, randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { type Dispatcher, request } from "undici";
import type { Api } from "./api.js";

/** What an agent was told was stored: each checked again after the run (`verify.ts`). */
export interface Acknowledged {
  /** Thread item ids. */
  items: string[];
  /** Uploads: filename and the SHA-256 of the bytes sent. */
  uploads: { filename: string; sha256: string }[];
  /** Session blobs: the request they were stored for and the SHA-256 of the blob. */
  sessionBlobs: { requestId: string; sha256: string }[];
  /** Hot-state versions and their hashes. */
  hotStates: { version: number; hash: string }[];
  /** Prompt-metrics turns. */
  turns: number[];
}

/** One simulated agent: one registered session of a principal, its dispatcher role, its thread. */
export interface AgentPlan {
  index: number;
  principalId: string;
  key: string;
  sessionId: string;
  /** Replicas' base URLs; `home` has the session's file and artifacts (and its MCP session). */
  urls: string[];
  home: number;
}

export interface AgentState {
  plan: AgentPlan;
  acked: Acknowledged;
  dispatcherToken: string | undefined;
  /** Item ids its live tail delivered. */
  delivered: Set<string>;
  hotStateVersion: number;
  mcpSession: string | undefined;
}

const THREAD_ALIAS = "main";
const UPLOAD_BYTES = 32 * 1024;
const MCP_PROTOCOL = "2025-06-18";

export function newAgentState(plan: AgentPlan): AgentState {
  return {
    plan,
    acked: { items: [], uploads: [], sessionBlobs: [], hotStates: [], turns: [] },
    dispatcherToken: undefined,
    delivered: new Set(),
    hotStateVersion: 0,
    mcpSession: undefined,
  };
}

/** Registers the session on its home replica and claims its dispatcher role. */
export async function setUpAgent(api: Api, state: AgentState): Promise<void> {
  const { plan } = state;
  const home = plan.urls[plan.home]!;
  const registered = await api.call("setup.register", `${home}/agents/sessions`, "POST", {
    key: plan.key,
    json: { sessionId: plan.sessionId },
  });
  if (!registered) throw new Error(`agent ${plan.index} could not register its session`);
  const claimed = await api.call(
    "setup.claim",
    `${home}/sessions/${plan.sessionId}/hot-state/dispatcher`,
    "POST",
    {
      key: plan.key,
      json: {},
    },
  );
  if (!claimed) throw new Error(`agent ${plan.index} could not claim its dispatcher role`);
  state.dispatcherToken = claimed.json<{ dispatcher_token: string }>().dispatcher_token;
}

/**
 * Tails the agent's thread over SSE until `stop` (document 003), on a replica other than the one
 * it posts to when there are two (an item posted on one reaches the other through the notifier).
 * Reconnects after a cut (a crash), as the viewer does.
 */
export async function tailThread(
  state: AgentState,
  dispatcher: Dispatcher,
  stop: AbortSignal,
): Promise<void> {
  const { plan } = state;
  const url = `${plan.urls[(plan.home + 1) % plan.urls.length]}/threads/${plan.sessionId}/${THREAD_ALIAS}/events`;
  while (!stop.aborted) {
    try {
      const response = await request(url, {
        headers: { authorization: `Bearer ${plan.key}`, accept: "text/event-stream" },
        dispatcher,
        signal: stop,
      });
      let buffer = "";
      for await (const chunk of response.body) {
        buffer += chunk.toString();
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          readEvent(buffer.slice(0, end), state.delivered);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
        }
      }
    } catch {
      // Cut (a replica killed, the run over): tail again.
    }
    if (!stop.aborted) await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function readEvent(block: string, delivered: Set<string>): void {
  const lines = block.split("\n");
  if (!lines.includes("event: item")) return;
  const data = lines.find((line) => line.startsWith("data: "));
  if (!data) return;
  const id = (JSON.parse(data.slice(6)) as { id?: string }).id;
  if (id) delivered.add(id);
}

/** The replica a turn's request goes to: requests are spread over every replica, turn by turn. */
function spread(plan: AgentPlan, turn: number): string {
  return plan.urls[(plan.index + turn) % plan.urls.length]!;
}

/** One turn of the agent's loop: the mix of the five documents. */
export async function agentTurn(api: Api, state: AgentState, turn: number): Promise<void> {
  await postItem(api, state, turn);
  await writeHotState(api, state, turn);
  await logPromptMetrics(api, state, turn);
  if (turn % 2 === 0) await readArtifact(api, state, turn);
  if (turn % 3 === 0) await upload(api, state, turn);
  if (turn % 4 === 0) await readOverMcp(api, state);
  if (turn % 5 === 0) await storeSessionBlob(api, state, turn);
  if (turn % 5 === 1) await readThreadPage(api, state, turn);
}

/** 003: a thread item, posted with an id of the agent's own. */
async function postItem(api: Api, state: AgentState, turn: number): Promise<void> {
  const { plan } = state;
  const id = `i${turn}-${randomUUID().slice(0, 8)}`;
  const text = `turn ${turn}: ran the tests, ${turn % 7} failures left. ${"detail ".repeat(40)}`;
  const posted = await api.call(
    "thread.post",
    `${spread(plan, turn)}/threads/${plan.sessionId}/${THREAD_ALIAS}/items`,
    "POST",
    {
      key: plan.key,
      json: { id, content: [{ type: "text", text }], metadata: { type: "text" } },
    },
  );
  if (posted && posted.json<{ item: { id: string } }>().item.id === id) state.acked.items.push(id);
}

async function readThreadPage(api: Api, state: AgentState, turn: number): Promise<void> {
  const { plan } = state;
  await api.call(
    "thread.page",
    `${spread(plan, turn)}/threads/${plan.sessionId}/${THREAD_ALIAS}?limit=50`,
    "GET",
    {
      key: plan.key,
    },
  );
}

/** 001: the dispatcher's hot-state write, from the version it read. */
async function writeHotState(api: Api, state: AgentState, turn: number): Promise<void> {
  const { plan } = state;
  const url = `${spread(plan, turn)}/sessions/${plan.sessionId}/hot-state`;
  const written = await api.call("hot-state.write", url, "PUT", {
    key: plan.key,
    json: {
      dispatcher_token: state.dispatcherToken,
      expected_version: state.hotStateVersion,
      state: {
        session_id: plan.sessionId,
        run_id: "load",
        objective: "Keep the parser's tests green under load",
        constraints: ["no backtracking", "keep the public API"],
        accepted_decisions: Array.from(
          { length: Math.min(turn, 8) },
          (_, i) => `decision ${turn - i}: measured`,
        ),
        open_questions: [`what does turn ${turn + 1} need?`],
        last_successful_step: `turn ${turn}`,
        risk_level: "low",
        artifact_index: [],
      },
    },
  });
  if (written) {
    const { version, hash } = written.json<{ version: number; hash: string }>();
    state.hotStateVersion = version;
    state.acked.hotStates.push({ version, hash });
    return;
  }
  // Unknown outcome (a replica killed mid-write): read the latest version and go on from it.
  const latest = await api.call("hot-state.read", url, "GET", { key: plan.key, expect: [200, 404] });
  if (latest?.status === 200) state.hotStateVersion = latest.json<{ version: number }>().version;
}

/** 001: the call's prompt, measured against the version it carried. */
async function logPromptMetrics(api: Api, state: AgentState, turn: number): Promise<void> {
  const { plan } = state;
  const logged = await api.call(
    "prompt-metrics",
    `${spread(plan, turn)}/sessions/${plan.sessionId}/prompt-metrics`,
    "POST",
    {
      key: plan.key,
      json: {
        run_id: "load",
        hot_state_version: state.hotStateVersion,
        system_prompt: `You are the dispatcher of a coding agent.\n${"Keep the tests green. ".repeat(60)}`,
        user_prompt: `Turn ${turn}: run the tests again and fix what fails.`,
      },
    },
  );
  if (logged) state.acked.turns.push(logged.json<{ entry: { turn: number } }>().entry.turn);
}

/** 000: a page of the session's tool output, on the host that has the session. */
async function readArtifact(api: Api, state: AgentState, turn: number): Promise<void> {
  const { plan } = state;
  const offset = 1 + ((turn * 50) % 1_900);
  await api.call(
    "artifact.read",
    `${plan.urls[plan.home]}/sessions/${plan.sessionId}/artifact/0?offset=${offset}&limit=50`,
    "GET",
    {
      key: plan.key,
    },
  );
}

/** 004: upload-url → PUT to the signed URL (S3) → complete. */
async function upload(api: Api, state: AgentState, turn: number): Promise<void> {
  const { plan } = state;
  const base = spread(plan, turn);
  const bytes = randomBytes(UPLOAD_BYTES);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const filename = `turn-${turn}-${randomUUID().slice(0, 8)}.log`;
  const signed = await api.call("upload.url", `${base}/agents/artifacts/upload-url`, "POST", {
    key: plan.key,
    json: {
      agentSessionId: plan.sessionId,
      filename,
      contentType: "text/plain",
      fileSize: bytes.length,
      sha256,
    },
  });
  if (!signed) return;
  const { url, headers } = signed.json<{ url: string; headers: Record<string, string> }>();
  const put = await api.call("upload.put", url, "PUT", { body: bytes, headers });
  if (!put) return;
  const completed = await api.call("upload.complete", `${base}/agents/artifacts/complete`, "POST", {
    key: plan.key,
    json: { agentSessionId: plan.sessionId, filename },
  });
  if (completed) state.acked.uploads.push({ filename, sha256 });
}

/** 000 over MCP: `resources/read` of the session's tool output, on its home replica. */
async function readOverMcp(api: Api, state: AgentState): Promise<void> {
  const { plan } = state;
  const url = `${plan.urls[plan.home]}/mcp/sessions/${plan.sessionId}`;
  const headers = () => ({
    accept: "application/json, text/event-stream",
    ...(state.mcpSession ? { "mcp-session-id": state.mcpSession, "mcp-protocol-version": MCP_PROTOCOL } : {}),
  });
  if (!state.mcpSession) {
    const opened = await api.call("mcp.initialize", url, "POST", {
      key: plan.key,
      headers: headers(),
      json: {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: MCP_PROTOCOL,
          capabilities: {},
          clientInfo: { name: "stowage-load", version: "0" },
        },
      },
    });
    const id = opened?.headers["mcp-session-id"];
    if (typeof id !== "string") return;
    state.mcpSession = id;
    await api.call("mcp.initialized", url, "POST", {
      key: plan.key,
      headers: headers(),
      json: { jsonrpc: "2.0", method: "notifications/initialized" },
    });
  }
  const read = await api.call("mcp.read", url, "POST", {
    key: plan.key,
    headers: headers(),
    json: { jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "artifact://0" } },
    expect: [200, 404],
  });
  // A session the server no longer has (a restarted replica): the next read opens a new one.
  if (read?.status === 404) state.mcpSession = undefined;
}

/** 002: a container's session stored for a request (the raw form), then fetched as the follow-up run would. */
async function storeSessionBlob(api: Api, state: AgentState, turn: number): Promise<void> {
  const { plan } = state;
  const base = spread(plan, turn);
  const requestId = `${plan.sessionId}-r${turn}`;
  const lines = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({
      type: i % 2 === 0 ? "user" : "assistant",
      sessionId: plan.sessionId,
      uuid: randomUUID(),
      message: {
        role: i % 2 === 0 ? "user" : "assistant",
        content: `line ${i} of turn ${turn}: ${"text ".repeat(40)}`,
      },
    }),
  );
  const raw = Buffer.from(`${lines.join("\n")}\n`);
  const blob = gzipSync(raw);
  const sha256 = createHash("sha256").update(blob).digest("hex");
  const stored = await api.call("session-blob.store", `${base}/requests/${requestId}/session-blobs`, "POST", {
    key: plan.key,
    body: blob,
    headers: {
      "content-type": "application/octet-stream",
      "x-stowage-session-id": plan.sessionId,
      "x-stowage-session-raw-size-bytes": String(raw.length),
    },
  });
  if (!stored) return;
  state.acked.sessionBlobs.push({ requestId, sha256 });
  await api.call(
    "session-blob.latest",
    `${spread(plan, turn + 1)}/requests/${requestId}/session-blobs/latest?format=raw`,
    "GET",
    {
      key: plan.key,
    },
  );
}
