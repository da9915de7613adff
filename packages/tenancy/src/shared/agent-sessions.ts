import { createSessionFiles, type OpenedSession, type SessionFiles } from "@stowage/artifacts";
import { type OperationOptions, type Principal, StowageError } from "@stowage/core";
import type { RegisteredSessions } from "./registered-sessions.js";

/**
 * A principal's agent session files on this host: `<agentSessionsDir>/<kind>/<id>/`, opened below
 * the directory without following a link, so a link planted at `<kind>` or `<kind>/<id>` (at another
 * principal's sessions) is refused, not followed. Light: a command that only reads an artifact
 * loads nothing else.
 */
export function agentSessionsOf(agentSessionsDir: string, principal: Principal): SessionFiles {
  return createSessionFiles({ dir: agentSessionsDir, segments: [principal.kind, principal.id] });
}

/**
 * Registers `sessionId` in its principal's namespace and makes its session file on this host
 * (where its artifacts go), as every registration does: through the API, the CLI, or by hand.
 * True when the registration is new. CONFLICT (`SESSION_DELETING`) while its deletion is under way.
 */
export async function registerAgentSession(
  registered: RegisteredSessions,
  files: SessionFiles,
  sessionId: string,
  options: OperationOptions = {},
): Promise<boolean> {
  const created = await registered.register(sessionId, options);
  await ensureSessionFile(files, sessionId);
  return created;
}

/**
 * A session's files on this host, as `files.get` finds them; when this host has none yet but the
 * session is registered in the principal's namespace (registered on another host, or before its
 * first run wrote anything), its session file is made empty first. NOT_FOUND
 * (`SESSION_NOT_FOUND`) when there is neither.
 */
export async function openAgentSession(
  registered: RegisteredSessions,
  files: SessionFiles,
  sessionId: string,
  options: OperationOptions = {},
): Promise<OpenedSession> {
  const getOptions = options.signal ? { signal: options.signal } : {};
  try {
    return await files.get(sessionId, getOptions);
  } catch (err) {
    const missing = StowageError.is(err, "NOT_FOUND") && err.reason === "SESSION_NOT_FOUND";
    if (!missing || !(await registered.has(sessionId, options))) throw err;
  }
  await ensureSessionFile(files, sessionId);
  return files.get(sessionId, getOptions);
}

async function ensureSessionFile(files: SessionFiles, sessionId: string): Promise<void> {
  // Created without looking first: a concurrent registration of the same id may create it
  // between a look and a create, and its SESSION_EXISTS means the same as finding it.
  try {
    await files.create(sessionId);
  } catch (err) {
    if (!(StowageError.is(err, "ALREADY_EXISTS") && err.reason === "SESSION_EXISTS")) throw err;
  }
}
