import { StowageError } from "@stowage/core";
import type { ThreadItem } from "@stowage/thread-items";
import type { RunningServer } from "../http/server.js";
import type { ApiClient } from "./api-client.js";

/**
 * What every step of the demo works with: the running server, the demo user's API client and key,
 * the agent session the run writes into, and its thread.
 */
export interface DemoRun {
  server: RunningServer;
  api: ApiClient;
  apiKey: string;
  agentSessionId: string;
  /** The agent session, opened as the agent beside the server writes into it. */
  session: Awaited<ReturnType<ReturnType<RunningServer["services"]["tenant"]>["agentSessions"]["get"]>>;
  thread: { jobId: string; alias: string };
  /** Posts an item to the run's thread through the API; resolves with the item as stored. */
  post(item: ThreadItem): Promise<ThreadItem>;
  /** Says a line of the demo's narration. */
  step(line: string): void;
}

export function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new StowageError("INTERNAL", `demo check failed: ${what}`);
}
