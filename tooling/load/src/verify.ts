import { createHash } from "node:crypto";
import type { AgentState } from "./agent.js";
import type { Api } from "./api.js";

/** What could not be read back as acknowledged, by kind, with a few examples. */
export interface Losses {
  checked: number;
  lost: number;
  byKind: Record<string, number>;
  examples: string[];
}

/** Agents verified at once: the check is read-heavy, and the figures are already taken. */
const VERIFY_CONCURRENCY = 8;
const MAX_EXAMPLES = 10;

/**
 * Reads back every acknowledged write of every agent, through the replicas in turn: each item id
 * in its thread, each upload's bytes against their SHA-256, each stored session's blob against its
 * SHA-256, each hot-state version's hash, each prompt-metrics turn. What is missing or different
 * is lost.
 */
export async function verifyAcknowledged(api: Api, agents: AgentState[]): Promise<Losses> {
  const losses: Losses = { checked: 0, lost: 0, byKind: {}, examples: [] };
  const lose = (kind: string, what: string) => {
    losses.lost += 1;
    losses.byKind[kind] = (losses.byKind[kind] ?? 0) + 1;
    if (losses.examples.length < MAX_EXAMPLES) losses.examples.push(`${kind}: ${what}`);
  };
  let next = 0;
  const worker = async () => {
    while (next < agents.length) {
      const agent = agents[next++]!;
      await verifyAgent(api, agent, losses, lose);
    }
  };
  await Promise.all(Array.from({ length: VERIFY_CONCURRENCY }, worker));
  return losses;
}

type Lose = (kind: string, what: string) => void;

async function verifyAgent(api: Api, agent: AgentState, losses: Losses, lose: Lose): Promise<void> {
  const { plan, acked } = agent;
  const base = plan.urls[(plan.index + 1) % plan.urls.length]!;
  const call = (path: string, expect: readonly number[] = [200]) =>
    api.call("verify", `${base}${path}`, "GET", { key: plan.key, expect: [...expect, 404] });

  const items = new Set<string>();
  let cursor: string | null | undefined;
  do {
    const page = await call(
      `/threads/${plan.sessionId}/main?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    if (page?.status !== 200) break;
    const { entries, cursor: after } = page.json<{
      entries: { kind: string; item?: { id?: string } }[];
      cursor?: string | null;
    }>();
    for (const entry of entries) if (entry.item?.id) items.add(entry.item.id);
    cursor = after && after !== cursor ? after : undefined;
  } while (cursor);
  for (const id of acked.items) {
    losses.checked += 1;
    if (!items.has(id)) lose("thread item", `${plan.sessionId}/${id}`);
  }

  for (const upload of acked.uploads) {
    losses.checked += 1;
    const signed = await call(
      `/agents/${plan.sessionId}/artifacts/${encodeURIComponent(upload.filename)}/download`,
    );
    if (signed?.status !== 200) {
      lose("upload", `${plan.sessionId}/${upload.filename}: no download URL (${signed?.status ?? "failed"})`);
      continue;
    }
    const bytes = await api.call("verify", signed.json<{ url: string }>().url, "GET");
    if (!bytes || sha256(bytes.body) !== upload.sha256)
      lose("upload", `${plan.sessionId}/${upload.filename}: bytes differ`);
  }

  for (const stored of acked.sessionBlobs) {
    losses.checked += 1;
    const latest = await call(`/requests/${stored.requestId}/session-blobs/latest?format=raw`);
    if (latest?.status !== 200 || sha256(latest.body) !== stored.sha256)
      lose("session blob", stored.requestId);
  }

  for (const version of acked.hotStates) {
    losses.checked += 1;
    const read = await call(`/sessions/${plan.sessionId}/hot-state/versions/${version.version}`);
    if (read?.status !== 200 || read.json<{ hash: string }>().hash !== version.hash) {
      lose("hot-state version", `${plan.sessionId}@${version.version}`);
    }
  }

  const turns = new Set<number>();
  let after = 0;
  for (;;) {
    const page = await call(`/sessions/${plan.sessionId}/prompt-metrics?after_turn=${after}&limit=10000`);
    if (page?.status !== 200) break;
    const { entries, next_after_turn } = page.json<{
      entries: { turn: number }[];
      next_after_turn: number | null;
    }>();
    for (const entry of entries) turns.add(entry.turn);
    if (next_after_turn === null || next_after_turn <= after) break;
    after = next_after_turn;
  }
  for (const turn of acked.turns) {
    losses.checked += 1;
    if (!turns.has(turn)) lose("prompt-metrics turn", `${plan.sessionId}#${turn}`);
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
