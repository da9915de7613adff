import { join } from "node:path";
import { Command } from "commander";
import { AGENT_SESSIONS_DIR } from "../shared-store.js";
import type { CommandContext } from "./context.js";
import { withStoredData } from "./open.js";
import { jsonOption, printResult } from "./output.js";
import { addPrincipalOptions, type PrincipalOptions, requiredPrincipal } from "./principal-option.js";

/**
 * `stowage session register <id>`: what `POST /agents/sessions` does, by hand: a session exists for
 * uploads only once registered in its principal's namespace.
 */
export function registerSessionCommand(context: CommandContext): Command {
  return addPrincipalOptions(
    new Command("register").description(
      "Register an agent session in a user's or org's namespace, so that files can be uploaded into it",
    ),
  )
    .argument("<session-id>", "the agent session's id")
    .addOption(jsonOption())
    .action(async (sessionId: string, options: PrincipalOptions & { json?: boolean }) => {
      const principal = requiredPrincipal(options);
      await withStoredData(context, async ({ registeredSessions, config }) => {
        // Its session file too, as the API's registration makes it: `stowage mcp` serves it at once.
        const { agentSessionsOf, registerAgentSession } = await import("@stowage/tenancy/shared");
        const files = agentSessionsOf(join(config.dataDir, AGENT_SESSIONS_DIR), principal);
        const created = await registerAgentSession(registeredSessions(principal), files, sessionId);
        printResult(context, options.json, { sessionId, principal, created }, () => [
          `${created ? "registered" : "already registered"} session ${sessionId} for ${principal.kind} ${principal.id}`,
        ]);
      });
    });
}

/** `stowage session list`: the registered sessions of one principal (not the captured ones: `session stored`). */
export function listSessionsCommand(context: CommandContext): Command {
  return addPrincipalOptions(
    new Command("list").description(
      "List the sessions registered in a user's or org's namespace (for uploads and MCP); captured sessions: session stored",
    ),
  )
    .addOption(jsonOption())
    .action(async (options: PrincipalOptions & { json?: boolean }) => {
      const principal = requiredPrincipal(options);
      const { sharedStorePlace } = await import("./shared-stores.js");
      await withStoredData(context, async ({ registeredSessions, config }) => {
        const sessions: string[] = [];
        for await (const sessionId of registeredSessions(principal).list()) sessions.push(sessionId);
        printResult(context, options.json, sessions, () => sessions);
        if (sessions.length === 0) {
          context.note(
            `no sessions registered for ${principal.kind} ${principal.id} in ${sharedStorePlace(config)} (sessions captured for follow-up runs: stowage session stored --${principal.kind} ${principal.id})`,
          );
        }
      });
    });
}
