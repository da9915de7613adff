import { type Env, envString, envUrl } from "@stowage/core";

/** What an agent's uploads read from its environment; each field is undefined when unset. */
export interface AgentUploadEnv {
  /** `STOWAGE_API_URL`, or the design document's `CONTINUE_API_BASE`. */
  apiBase?: string;
  /** `STOWAGE_API_KEY`, or the design document's `CONTINUE_API_KEY`. */
  apiKey?: string;
  /** `AGENT_SESSION_ID` (the design document's name, shared). */
  sessionId?: string;
}

/**
 * The agent's upload settings from the environment: Stowage's names first, the design document's
 * (`CONTINUE_API_BASE`, `CONTINUE_API_KEY`, `AGENT_SESSION_ID`) as aliases, so an agent written
 * against the document runs unchanged. Blank values count as unset; a URL that is not http(s)
 * is INVALID_INPUT (`INVALID_SETTING`).
 */
export function agentUploadOptionsFromEnv(env: Env): AgentUploadEnv {
  const apiBase = envUrl(env, "STOWAGE_API_URL") ?? envUrl(env, "CONTINUE_API_BASE");
  const apiKey = envString(env, "STOWAGE_API_KEY") ?? envString(env, "CONTINUE_API_KEY");
  const sessionId = envString(env, "AGENT_SESSION_ID");
  return {
    ...(apiBase === undefined ? {} : { apiBase }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(sessionId === undefined ? {} : { sessionId }),
  };
}
