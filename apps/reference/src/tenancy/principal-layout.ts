import { join } from "node:path";
import type { Principal } from "@stowage/uploads";

// How a principal's things are named where the app keeps them: in their own module so that a
// command that needs a name loads no store.

/** `user:alice` / `org:acme`: the owner recorded with what a principal stores (session blobs). */
export const ownerOf = (principal: Principal): string => `${principal.kind}:${principal.id}`;

/** The directories below the agent-sessions directory that hold one principal's sessions. */
export function agentSessionsSegments(principal: Principal): [string, string] {
  return [principal.kind, principal.id];
}

/** The directory of one principal's agent sessions under the directory of all of them. */
export function agentSessionsDirOf(agentSessionsDir: string, principal: Principal): string {
  return join(agentSessionsDir, ...agentSessionsSegments(principal));
}
