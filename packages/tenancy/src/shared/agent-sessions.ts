import { createSessionFiles, type SessionFiles } from "@stowage/artifacts";
import type { Principal } from "@stowage/core";

/**
 * A principal's agent session files on this host: `<agentSessionsDir>/<kind>/<id>/`, opened below
 * the directory without following a link, so a link planted at `<kind>` or `<kind>/<id>` (at another
 * principal's sessions) is refused, not followed. Light: a command that only reads an artifact
 * loads nothing else.
 */
export function agentSessionsOf(agentSessionsDir: string, principal: Principal): SessionFiles {
  return createSessionFiles({ dir: agentSessionsDir, segments: [principal.kind, principal.id] });
}
